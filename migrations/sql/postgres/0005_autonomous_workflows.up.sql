-- 0005_autonomous_workflows (postgres, up): frozen by `npm run migrate -- freeze 0005_autonomous_workflows`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "autonomous_workflows" (
  "id" serial PRIMARY KEY,
  "workflow_id" varchar(64) NOT NULL CONSTRAINT "autonomous_workflows_workflow_id_unique" UNIQUE,
  "tenant_id" integer,
  "user_id" integer NOT NULL,
  "batch_id" varchar(64),
  "batch_position" integer,
  "title" text,
  "current_phase" varchar(30) NOT NULL DEFAULT 'preparation',
  "status" varchar(30) NOT NULL DEFAULT 'pending',
  "previous_status" varchar(30),
  "development_round" integer NOT NULL DEFAULT 0,
  "error" text,
  "project_path" varchar(500),
  "branch" varchar(255),
  "preferred_worktree_path" varchar(500),
  "pr_number" integer,
  "pr_url" text,
  "definition_snapshot" text NOT NULL,
  "main_session_id" varchar(64),
  "review_session_id" varchar(64),
  "test_session_id" varchar(64),
  "verification_session_id" varchar(64),
  "total_tokens" bigint NOT NULL DEFAULT 0,
  "input_tokens" bigint NOT NULL DEFAULT 0,
  "output_tokens" bigint NOT NULL DEFAULT 0,
  "request_count" bigint NOT NULL DEFAULT 0,
  "ci_repair_attempts" integer NOT NULL DEFAULT 0,
  "ci_failure_fingerprints" text,
  "ci_diagnostics_state" text,
  "verification_status" varchar(30),
  "verification_attempts" integer NOT NULL DEFAULT 0,
  "acceptance_snapshot_hash" varchar(128),
  "manual_override_context" text,
  "verified_by" varchar(100),
  "pause_context" text,
  "timeout_context" text,
  "feedback_context" text,
  "resume_context" text,
  "forked_from_workflow_id" varchar(64),
  "forked_from_milestone_id" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now(),
  "completed_at" timestamp with time zone
);

CREATE INDEX IF NOT EXISTS "autonomous_workflows_user" ON "autonomous_workflows" ("user_id");

CREATE INDEX IF NOT EXISTS "autonomous_workflows_batch" ON "autonomous_workflows" ("batch_id");

CREATE TABLE IF NOT EXISTS "workflow_milestones" (
  "id" serial PRIMARY KEY,
  "workflow_id" varchar(64) NOT NULL REFERENCES "autonomous_workflows"("workflow_id") ON DELETE CASCADE,
  "kind" varchar(40) NOT NULL,
  "title" text,
  "status" varchar(20) NOT NULL DEFAULT 'in_progress',
  "session_line" varchar(20),
  "session_id" varchar(64),
  "content" text,
  "commit_sha" varchar(64),
  "diff_additions" integer NOT NULL DEFAULT 0,
  "diff_deletions" integer NOT NULL DEFAULT 0,
  "diff_files" integer NOT NULL DEFAULT 0,
  "error" text,
  "phase_total_tokens" bigint NOT NULL DEFAULT 0,
  "phase_input_tokens" bigint NOT NULL DEFAULT 0,
  "phase_output_tokens" bigint NOT NULL DEFAULT 0,
  "phase_request_count" bigint NOT NULL DEFAULT 0,
  "live_activity" text,
  "is_cancelled" boolean NOT NULL DEFAULT false,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now(),
  "finished_at" timestamp with time zone
);

CREATE INDEX IF NOT EXISTS "workflow_milestones_workflow" ON "workflow_milestones" ("workflow_id");
