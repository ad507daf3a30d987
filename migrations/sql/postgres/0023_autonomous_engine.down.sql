-- 0023_autonomous_engine (postgres, down): frozen by `npm run migrate -- freeze 0023_autonomous_engine`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS workflow_milestones_sequence;

DROP INDEX IF EXISTS autonomous_workflows_project;

DROP INDEX IF EXISTS autonomous_workflows_tenant_status;

ALTER TABLE "autonomous_workflows" DROP COLUMN "project_id";

ALTER TABLE "autonomous_workflows" DROP COLUMN "cli_tool";

ALTER TABLE "autonomous_workflows" DROP COLUMN "model";

ALTER TABLE "autonomous_workflows" DROP COLUMN "branch_strategy";

ALTER TABLE "autonomous_workflows" DROP COLUMN "baseline_sha";

ALTER TABLE "autonomous_workflows" DROP COLUMN "started_at";

ALTER TABLE "autonomous_workflows" DROP COLUMN "phase_started_at";

ALTER TABLE "autonomous_workflows" DROP COLUMN "planning_deadline_at";

ALTER TABLE "autonomous_workflows" DROP COLUMN "task_deadline_at";

ALTER TABLE "autonomous_workflows" DROP COLUMN "paused_by";

ALTER TABLE "autonomous_workflows" DROP COLUMN "feedback_return_phase";

ALTER TABLE "autonomous_workflows" DROP COLUMN "retry_count";

ALTER TABLE "autonomous_workflows" DROP COLUMN "last_transition_at";

ALTER TABLE "autonomous_workflows" DROP COLUMN "verified_at";

ALTER TABLE "workflow_milestones" DROP COLUMN "sequence";

ALTER TABLE "workflow_milestones" DROP COLUMN "phase";

ALTER TABLE "workflow_milestones" DROP COLUMN "attempt";

ALTER TABLE "workflow_milestones" DROP COLUMN "started_at";

DROP TABLE IF EXISTS "autonomous_session_lines";

DROP TABLE IF EXISTS "autonomous_batches";
