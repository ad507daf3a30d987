-- 0023_autonomous_engine (sqlite, up): frozen by `npm run migrate -- freeze 0023_autonomous_engine`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "autonomous_batches" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "batch_id" TEXT NOT NULL CONSTRAINT "autonomous_batches_batch_id_unique" UNIQUE,
  "tenant_id" INTEGER,
  "user_id" INTEGER NOT NULL,
  "project_id" INTEGER,
  "baseline_sha" TEXT,
  "status" TEXT NOT NULL DEFAULT 'active',
  "item_count" INTEGER NOT NULL DEFAULT 0,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE INDEX IF NOT EXISTS "autonomous_batches_user" ON "autonomous_batches" ("user_id");

CREATE TABLE IF NOT EXISTS "autonomous_session_lines" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "workflow_id" TEXT NOT NULL REFERENCES "autonomous_workflows"("workflow_id") ON DELETE CASCADE,
  "line" TEXT NOT NULL,
  "session_id" TEXT NOT NULL,
  "provider_session_id" TEXT,
  "proxy_token_id" TEXT,
  "cli_tool" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "autonomous_session_lines_line" ON "autonomous_session_lines" ("workflow_id", "line");

ALTER TABLE "autonomous_workflows" ADD COLUMN "project_id" INTEGER;

ALTER TABLE "autonomous_workflows" ADD COLUMN "cli_tool" TEXT;

ALTER TABLE "autonomous_workflows" ADD COLUMN "model" TEXT;

ALTER TABLE "autonomous_workflows" ADD COLUMN "branch_strategy" TEXT;

ALTER TABLE "autonomous_workflows" ADD COLUMN "baseline_sha" TEXT;

ALTER TABLE "autonomous_workflows" ADD COLUMN "started_at" INTEGER;

ALTER TABLE "autonomous_workflows" ADD COLUMN "phase_started_at" INTEGER;

ALTER TABLE "autonomous_workflows" ADD COLUMN "planning_deadline_at" INTEGER;

ALTER TABLE "autonomous_workflows" ADD COLUMN "task_deadline_at" INTEGER;

ALTER TABLE "autonomous_workflows" ADD COLUMN "paused_by" TEXT;

ALTER TABLE "autonomous_workflows" ADD COLUMN "feedback_return_phase" TEXT;

ALTER TABLE "autonomous_workflows" ADD COLUMN "retry_count" INTEGER NOT NULL DEFAULT 0;

ALTER TABLE "autonomous_workflows" ADD COLUMN "last_transition_at" INTEGER;

ALTER TABLE "autonomous_workflows" ADD COLUMN "verified_at" INTEGER;

ALTER TABLE "workflow_milestones" ADD COLUMN "sequence" INTEGER;

ALTER TABLE "workflow_milestones" ADD COLUMN "phase" TEXT;

ALTER TABLE "workflow_milestones" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;

ALTER TABLE "workflow_milestones" ADD COLUMN "started_at" INTEGER;

UPDATE workflow_milestones SET sequence = (SELECT COUNT(*) FROM workflow_milestones m2 WHERE m2.workflow_id = workflow_milestones.workflow_id AND m2.id <= workflow_milestones.id) WHERE sequence IS NULL;

CREATE INDEX IF NOT EXISTS autonomous_workflows_tenant_status ON autonomous_workflows (tenant_id, status);

CREATE INDEX IF NOT EXISTS autonomous_workflows_project ON autonomous_workflows (project_id);

CREATE UNIQUE INDEX IF NOT EXISTS workflow_milestones_sequence ON workflow_milestones (workflow_id, sequence);
