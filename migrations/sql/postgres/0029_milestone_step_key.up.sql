-- 0029_milestone_step_key (postgres, up): frozen by `npm run migrate -- freeze 0029_milestone_step_key`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "workflow_milestones" ADD COLUMN "step_key" varchar(120);

CREATE UNIQUE INDEX IF NOT EXISTS workflow_milestones_step_key ON workflow_milestones (workflow_id, step_key);
