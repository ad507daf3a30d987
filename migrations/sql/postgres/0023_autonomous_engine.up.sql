-- 0023_autonomous_engine (postgres, up): frozen by `npm run migrate -- freeze 0023_autonomous_engine`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "autonomous_batches" (
  "id" serial PRIMARY KEY,
  "batch_id" varchar(64) NOT NULL CONSTRAINT "autonomous_batches_batch_id_unique" UNIQUE,
  "tenant_id" integer,
  "user_id" integer NOT NULL,
  "project_id" integer,
  "baseline_sha" varchar(64),
  "status" varchar(20) NOT NULL DEFAULT 'active',
  "item_count" integer NOT NULL DEFAULT 0,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS "autonomous_batches_user" ON "autonomous_batches" ("user_id");

CREATE TABLE IF NOT EXISTS "autonomous_session_lines" (
  "id" serial PRIMARY KEY,
  "workflow_id" varchar(64) NOT NULL REFERENCES "autonomous_workflows"("workflow_id") ON DELETE CASCADE,
  "line" varchar(20) NOT NULL,
  "session_id" varchar(64) NOT NULL,
  "provider_session_id" varchar(255),
  "proxy_token_id" varchar(64),
  "cli_tool" varchar(50),
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "autonomous_session_lines_line" ON "autonomous_session_lines" ("workflow_id", "line");

ALTER TABLE "autonomous_workflows" ADD COLUMN "project_id" integer;

ALTER TABLE "autonomous_workflows" ADD COLUMN "cli_tool" varchar(50);

ALTER TABLE "autonomous_workflows" ADD COLUMN "model" varchar(100);

ALTER TABLE "autonomous_workflows" ADD COLUMN "branch_strategy" varchar(20);

ALTER TABLE "autonomous_workflows" ADD COLUMN "baseline_sha" varchar(64);

ALTER TABLE "autonomous_workflows" ADD COLUMN "started_at" timestamp with time zone;

ALTER TABLE "autonomous_workflows" ADD COLUMN "phase_started_at" timestamp with time zone;

ALTER TABLE "autonomous_workflows" ADD COLUMN "planning_deadline_at" timestamp with time zone;

ALTER TABLE "autonomous_workflows" ADD COLUMN "task_deadline_at" timestamp with time zone;

ALTER TABLE "autonomous_workflows" ADD COLUMN "paused_by" varchar(30);

ALTER TABLE "autonomous_workflows" ADD COLUMN "feedback_return_phase" varchar(30);

ALTER TABLE "autonomous_workflows" ADD COLUMN "retry_count" integer NOT NULL DEFAULT 0;

ALTER TABLE "autonomous_workflows" ADD COLUMN "last_transition_at" timestamp with time zone;

ALTER TABLE "autonomous_workflows" ADD COLUMN "verified_at" timestamp with time zone;

ALTER TABLE "workflow_milestones" ADD COLUMN "sequence" integer;

ALTER TABLE "workflow_milestones" ADD COLUMN "phase" varchar(30);

ALTER TABLE "workflow_milestones" ADD COLUMN "attempt" integer NOT NULL DEFAULT 1;

ALTER TABLE "workflow_milestones" ADD COLUMN "started_at" timestamp with time zone;

UPDATE workflow_milestones SET sequence = (SELECT COUNT(*) FROM workflow_milestones m2 WHERE m2.workflow_id = workflow_milestones.workflow_id AND m2.id <= workflow_milestones.id) WHERE sequence IS NULL;

CREATE INDEX IF NOT EXISTS autonomous_workflows_tenant_status ON autonomous_workflows (tenant_id, status);

CREATE INDEX IF NOT EXISTS autonomous_workflows_project ON autonomous_workflows (project_id);

CREATE UNIQUE INDEX IF NOT EXISTS workflow_milestones_sequence ON workflow_milestones (workflow_id, sequence);
