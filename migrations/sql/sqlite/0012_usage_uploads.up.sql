-- 0012_usage_uploads (sqlite, up): frozen by `npm run migrate -- freeze 0012_usage_uploads`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "usage_uploads" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tenant_id" INTEGER NOT NULL DEFAULT 1 REFERENCES "tenants"("id") ON DELETE CASCADE,
  "date" TEXT NOT NULL,
  "tool_name" TEXT NOT NULL,
  "host_name" TEXT NOT NULL DEFAULT 'localhost',
  "tokens_used" INTEGER NOT NULL DEFAULT 0,
  "input_tokens" INTEGER NOT NULL DEFAULT 0,
  "output_tokens" INTEGER NOT NULL DEFAULT 0,
  "cache_tokens" INTEGER NOT NULL DEFAULT 0,
  "request_count" INTEGER NOT NULL DEFAULT 0,
  "models_used" TEXT,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "usage_uploads_key" ON "usage_uploads" ("tenant_id", "date", "tool_name", "host_name");
