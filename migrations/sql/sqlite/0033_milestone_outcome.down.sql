-- 0033_milestone_outcome (sqlite, down): frozen by `npm run migrate -- freeze 0033_milestone_outcome`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "workflow_milestones" DROP COLUMN "outcome";
