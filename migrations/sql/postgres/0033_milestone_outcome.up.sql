-- 0033_milestone_outcome (postgres, up): frozen by `npm run migrate -- freeze 0033_milestone_outcome`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "workflow_milestones" ADD COLUMN "outcome" varchar(40);
