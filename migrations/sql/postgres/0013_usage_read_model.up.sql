-- 0013_usage_read_model (postgres, up): frozen by `npm run migrate -- freeze 0013_usage_read_model`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "collector_runs" (
  "id" serial PRIMARY KEY,
  "run_id" varchar(100) NOT NULL,
  "trigger" varchar(20) NOT NULL DEFAULT 'api',
  "status" varchar(20) NOT NULL DEFAULT 'running',
  "requested_by" integer,
  "files_read" bigint NOT NULL DEFAULT 0,
  "messages_read" bigint NOT NULL DEFAULT 0,
  "messages_stored" bigint NOT NULL DEFAULT 0,
  "duplicates" bigint NOT NULL DEFAULT 0,
  "error_count" bigint NOT NULL DEFAULT 0,
  "detail" text,
  "error" text,
  "started_at" timestamp with time zone NOT NULL DEFAULT now(),
  "finished_at" timestamp with time zone
);

CREATE UNIQUE INDEX IF NOT EXISTS "collector_runs_run_id" ON "collector_runs" ("run_id");

CREATE TABLE IF NOT EXISTS "collector_files" (
  "id" serial PRIMARY KEY,
  "source" varchar(50) NOT NULL,
  "path" varchar(1000) NOT NULL,
  "byte_offset" bigint NOT NULL DEFAULT 0,
  "size" bigint NOT NULL DEFAULT 0,
  "head_hash" varchar(64),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "collector_files_path" ON "collector_files" ("source", "path");

ALTER TABLE "daily_messages" ADD COLUMN "tenant_id" integer NOT NULL DEFAULT 1;

ALTER TABLE "quota_alerts" ADD COLUMN "tenant_id" integer;

ALTER TABLE "quota_alerts" ADD COLUMN "period" varchar(10);

ALTER TABLE "quota_alerts" ADD COLUMN "period_key" varchar(10);

ALTER TABLE "quota_alerts" ADD COLUMN "dedupe_key" varchar(200);

ALTER TABLE "quota_alerts" ADD COLUMN "acknowledged_by" integer;

ALTER TABLE "quota_alerts" ADD COLUMN "acknowledged_at" timestamp with time zone;

UPDATE daily_messages SET tenant_id = (SELECT u.tenant_id FROM users u WHERE u.id = daily_messages.user_id) WHERE user_id IS NOT NULL AND EXISTS (SELECT 1 FROM users u WHERE u.id = daily_messages.user_id AND u.tenant_id IS NOT NULL);

CREATE INDEX daily_messages_tenant_date ON daily_messages (tenant_id, date);

CREATE INDEX daily_messages_user_date ON daily_messages (user_id, date);

CREATE UNIQUE INDEX quota_alerts_once ON quota_alerts (dedupe_key);

CREATE INDEX quota_alerts_tenant ON quota_alerts (tenant_id);

CREATE INDEX daily_messages_content_search ON daily_messages USING GIN (to_tsvector('simple', coalesce(content, '')));
