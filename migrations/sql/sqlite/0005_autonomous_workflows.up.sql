-- 0005_autonomous_workflows (sqlite, up): frozen by `npm run migrate -- freeze 0005_autonomous_workflows`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "autonomous_workflows" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "workflow_id" TEXT NOT NULL CONSTRAINT "autonomous_workflows_workflow_id_unique" UNIQUE,
  "tenant_id" INTEGER,
  "user_id" INTEGER NOT NULL,
  "batch_id" TEXT,
  "batch_position" INTEGER,
  "title" TEXT,
  "current_phase" TEXT NOT NULL DEFAULT 'preparation',
  "status" TEXT NOT NULL DEFAULT 'pending',
  "previous_status" TEXT,
  "development_round" INTEGER NOT NULL DEFAULT 0,
  "error" TEXT,
  "project_path" TEXT,
  "branch" TEXT,
  "preferred_worktree_path" TEXT,
  "pr_number" INTEGER,
  "pr_url" TEXT,
  "definition_snapshot" TEXT NOT NULL,
  "main_session_id" TEXT,
  "review_session_id" TEXT,
  "test_session_id" TEXT,
  "verification_session_id" TEXT,
  "total_tokens" INTEGER NOT NULL DEFAULT 0,
  "input_tokens" INTEGER NOT NULL DEFAULT 0,
  "output_tokens" INTEGER NOT NULL DEFAULT 0,
  "request_count" INTEGER NOT NULL DEFAULT 0,
  "ci_repair_attempts" INTEGER NOT NULL DEFAULT 0,
  "ci_failure_fingerprints" TEXT,
  "ci_diagnostics_state" TEXT,
  "verification_status" TEXT,
  "verification_attempts" INTEGER NOT NULL DEFAULT 0,
  "acceptance_snapshot_hash" TEXT,
  "manual_override_context" TEXT,
  "verified_by" TEXT,
  "pause_context" TEXT,
  "timeout_context" TEXT,
  "feedback_context" TEXT,
  "resume_context" TEXT,
  "forked_from_workflow_id" TEXT,
  "forked_from_milestone_id" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "completed_at" INTEGER
);

CREATE INDEX IF NOT EXISTS "autonomous_workflows_user" ON "autonomous_workflows" ("user_id");

CREATE INDEX IF NOT EXISTS "autonomous_workflows_batch" ON "autonomous_workflows" ("batch_id");

CREATE TABLE IF NOT EXISTS "workflow_milestones" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "workflow_id" TEXT NOT NULL REFERENCES "autonomous_workflows"("workflow_id") ON DELETE CASCADE,
  "kind" TEXT NOT NULL,
  "title" TEXT,
  "status" TEXT NOT NULL DEFAULT 'in_progress',
  "session_line" TEXT,
  "session_id" TEXT,
  "content" TEXT,
  "commit_sha" TEXT,
  "diff_additions" INTEGER NOT NULL DEFAULT 0,
  "diff_deletions" INTEGER NOT NULL DEFAULT 0,
  "diff_files" INTEGER NOT NULL DEFAULT 0,
  "error" TEXT,
  "phase_total_tokens" INTEGER NOT NULL DEFAULT 0,
  "phase_input_tokens" INTEGER NOT NULL DEFAULT 0,
  "phase_output_tokens" INTEGER NOT NULL DEFAULT 0,
  "phase_request_count" INTEGER NOT NULL DEFAULT 0,
  "live_activity" TEXT,
  "is_cancelled" INTEGER NOT NULL DEFAULT 0,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "finished_at" INTEGER
);

CREATE INDEX IF NOT EXISTS "workflow_milestones_workflow" ON "workflow_milestones" ("workflow_id");
