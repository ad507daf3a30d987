-- 0029_milestone_step_key (sqlite, down): frozen by `npm run migrate -- freeze 0029_milestone_step_key`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS workflow_milestones_step_key;

ALTER TABLE "workflow_milestones" DROP COLUMN "step_key";
