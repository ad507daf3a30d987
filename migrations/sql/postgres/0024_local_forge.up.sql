-- 0024_local_forge (postgres, up): frozen by `npm run migrate -- freeze 0024_local_forge`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "forge_pull_requests" (
  "id" serial PRIMARY KEY,
  "repo_key" varchar(200) NOT NULL,
  "number" integer NOT NULL,
  "workflow_id" varchar(64),
  "head_branch" varchar(255) NOT NULL,
  "base_branch" varchar(255) NOT NULL,
  "base_sha" varchar(64) NOT NULL,
  "head_sha" varchar(64) NOT NULL,
  "title" text NOT NULL,
  "body" text,
  "status" varchar(16) NOT NULL DEFAULT 'open',
  "merge_commit_sha" varchar(64),
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now(),
  "merged_at" timestamp with time zone
);

CREATE UNIQUE INDEX IF NOT EXISTS "forge_pull_requests_repo_number" ON "forge_pull_requests" ("repo_key", "number");

CREATE INDEX IF NOT EXISTS "forge_pull_requests_workflow" ON "forge_pull_requests" ("workflow_id");

CREATE TABLE IF NOT EXISTS "forge_ci_runs" (
  "id" serial PRIMARY KEY,
  "pull_request_id" integer NOT NULL REFERENCES "forge_pull_requests"("id") ON DELETE CASCADE,
  "head_sha" varchar(64) NOT NULL,
  "command" text NOT NULL,
  "status" varchar(16) NOT NULL DEFAULT 'queued',
  "exit_code" integer,
  "log_tail" text,
  "started_at" timestamp with time zone,
  "finished_at" timestamp with time zone
);

CREATE INDEX IF NOT EXISTS "forge_ci_runs_pull_request" ON "forge_ci_runs" ("pull_request_id", "head_sha");

CREATE UNIQUE INDEX IF NOT EXISTS forge_pull_requests_open_head ON forge_pull_requests (repo_key, head_branch, base_branch) WHERE status = 'open';
