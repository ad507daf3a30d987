-- 0042_gateway_keys (sqlite, up): frozen by `npm run migrate -- freeze 0042_gateway_keys`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "gateway_keys" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tenant_id" INTEGER,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "name" TEXT NOT NULL,
  "provider" TEXT NOT NULL,
  "key_hash" TEXT NOT NULL CONSTRAINT "gateway_keys_key_hash_unique" UNIQUE,
  "key_prefix" TEXT NOT NULL,
  "expires_at" INTEGER,
  "daily_token_limit" INTEGER,
  "monthly_token_limit" INTEGER,
  "daily_request_limit" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "last_used_at" INTEGER,
  "revoked_at" INTEGER,
  "revoked_by" INTEGER
);

CREATE INDEX IF NOT EXISTS "gateway_keys_user" ON "gateway_keys" ("user_id");

CREATE INDEX IF NOT EXISTS "gateway_keys_tenant" ON "gateway_keys" ("tenant_id");

CREATE TABLE IF NOT EXISTS "gateway_key_usage" (
  "key_id" INTEGER NOT NULL REFERENCES "gateway_keys"("id") ON DELETE CASCADE,
  "period" TEXT NOT NULL,
  "requests" INTEGER NOT NULL DEFAULT 0,
  "tokens" INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "gateway_key_usage_key" ON "gateway_key_usage" ("key_id", "period");
