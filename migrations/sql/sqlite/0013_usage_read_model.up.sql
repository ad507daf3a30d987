-- 0013_usage_read_model (sqlite, up): frozen by `npm run migrate -- freeze 0013_usage_read_model`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "collector_runs" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "run_id" TEXT NOT NULL,
  "trigger" TEXT NOT NULL DEFAULT 'api',
  "status" TEXT NOT NULL DEFAULT 'running',
  "requested_by" INTEGER,
  "files_read" INTEGER NOT NULL DEFAULT 0,
  "messages_read" INTEGER NOT NULL DEFAULT 0,
  "messages_stored" INTEGER NOT NULL DEFAULT 0,
  "duplicates" INTEGER NOT NULL DEFAULT 0,
  "error_count" INTEGER NOT NULL DEFAULT 0,
  "detail" TEXT,
  "error" TEXT,
  "started_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "finished_at" INTEGER
);

CREATE UNIQUE INDEX IF NOT EXISTS "collector_runs_run_id" ON "collector_runs" ("run_id");

CREATE TABLE IF NOT EXISTS "collector_files" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "source" TEXT NOT NULL,
  "path" TEXT NOT NULL,
  "byte_offset" INTEGER NOT NULL DEFAULT 0,
  "size" INTEGER NOT NULL DEFAULT 0,
  "head_hash" TEXT,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "collector_files_path" ON "collector_files" ("source", "path");

ALTER TABLE "daily_messages" ADD COLUMN "tenant_id" INTEGER NOT NULL DEFAULT 1;

ALTER TABLE "quota_alerts" ADD COLUMN "tenant_id" INTEGER;

ALTER TABLE "quota_alerts" ADD COLUMN "period" TEXT;

ALTER TABLE "quota_alerts" ADD COLUMN "period_key" TEXT;

ALTER TABLE "quota_alerts" ADD COLUMN "dedupe_key" TEXT;

ALTER TABLE "quota_alerts" ADD COLUMN "acknowledged_by" INTEGER;

ALTER TABLE "quota_alerts" ADD COLUMN "acknowledged_at" INTEGER;

UPDATE daily_messages SET tenant_id = (SELECT u.tenant_id FROM users u WHERE u.id = daily_messages.user_id) WHERE user_id IS NOT NULL AND EXISTS (SELECT 1 FROM users u WHERE u.id = daily_messages.user_id AND u.tenant_id IS NOT NULL);

CREATE INDEX daily_messages_tenant_date ON daily_messages (tenant_id, date);

CREATE INDEX daily_messages_user_date ON daily_messages (user_id, date);

CREATE UNIQUE INDEX quota_alerts_once ON quota_alerts (dedupe_key);

CREATE INDEX quota_alerts_tenant ON quota_alerts (tenant_id);

CREATE VIRTUAL TABLE daily_messages_fts USING fts5(content, content='daily_messages', content_rowid='id', tokenize='unicode61');

CREATE TRIGGER daily_messages_fts_insert AFTER INSERT ON daily_messages BEGIN INSERT INTO daily_messages_fts(rowid, content) VALUES (new.id, new.content); END;

CREATE TRIGGER daily_messages_fts_delete AFTER DELETE ON daily_messages BEGIN INSERT INTO daily_messages_fts(daily_messages_fts, rowid, content) VALUES ('delete', old.id, old.content); END;

CREATE TRIGGER daily_messages_fts_update AFTER UPDATE OF content ON daily_messages BEGIN INSERT INTO daily_messages_fts(daily_messages_fts, rowid, content) VALUES ('delete', old.id, old.content); INSERT INTO daily_messages_fts(rowid, content) VALUES (new.id, new.content); END;

INSERT INTO daily_messages_fts(daily_messages_fts) VALUES ('rebuild');
