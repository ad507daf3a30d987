-- 0004_proxy_tokens (sqlite, up): frozen by `npm run migrate -- freeze 0004_proxy_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "proxy_tokens" (
  "jti" TEXT PRIMARY KEY,
  "session_id" TEXT NOT NULL,
  "user_id" INTEGER NOT NULL,
  "tenant_id" INTEGER,
  "provider" TEXT NOT NULL,
  "session_type" TEXT NOT NULL DEFAULT 'general',
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "expires_at" INTEGER NOT NULL,
  "revoked_at" INTEGER,
  "revoked_reason" TEXT
);

CREATE INDEX IF NOT EXISTS "proxy_tokens_session" ON "proxy_tokens" ("session_id");

CREATE TABLE IF NOT EXISTS "usage_reports" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "report_id" TEXT NOT NULL CONSTRAINT "usage_reports_report_id_unique" UNIQUE,
  "session_id" TEXT,
  "machine_id" TEXT,
  "user_id" INTEGER,
  "input_tokens" INTEGER NOT NULL DEFAULT 0,
  "output_tokens" INTEGER NOT NULL DEFAULT 0,
  "model" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);
