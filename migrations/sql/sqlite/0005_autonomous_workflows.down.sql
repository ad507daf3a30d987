-- 0005_autonomous_workflows (sqlite, down): frozen by `npm run migrate -- freeze 0005_autonomous_workflows`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "workflow_milestones";

DROP TABLE IF EXISTS "autonomous_workflows";
