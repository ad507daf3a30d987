-- 0024_local_forge (sqlite, up): frozen by `npm run migrate -- freeze 0024_local_forge`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "forge_pull_requests" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "repo_key" TEXT NOT NULL,
  "number" INTEGER NOT NULL,
  "workflow_id" TEXT,
  "head_branch" TEXT NOT NULL,
  "base_branch" TEXT NOT NULL,
  "base_sha" TEXT NOT NULL,
  "head_sha" TEXT NOT NULL,
  "title" TEXT NOT NULL,
  "body" TEXT,
  "status" TEXT NOT NULL DEFAULT 'open',
  "merge_commit_sha" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "merged_at" INTEGER
);

CREATE UNIQUE INDEX IF NOT EXISTS "forge_pull_requests_repo_number" ON "forge_pull_requests" ("repo_key", "number");

CREATE INDEX IF NOT EXISTS "forge_pull_requests_workflow" ON "forge_pull_requests" ("workflow_id");

CREATE TABLE IF NOT EXISTS "forge_ci_runs" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "pull_request_id" INTEGER NOT NULL REFERENCES "forge_pull_requests"("id") ON DELETE CASCADE,
  "head_sha" TEXT NOT NULL,
  "command" TEXT NOT NULL,
  "status" TEXT NOT NULL DEFAULT 'queued',
  "exit_code" INTEGER,
  "log_tail" TEXT,
  "started_at" INTEGER,
  "finished_at" INTEGER
);

CREATE INDEX IF NOT EXISTS "forge_ci_runs_pull_request" ON "forge_ci_runs" ("pull_request_id", "head_sha");

CREATE UNIQUE INDEX IF NOT EXISTS forge_pull_requests_open_head ON forge_pull_requests (repo_key, head_branch, base_branch) WHERE status = 'open';
