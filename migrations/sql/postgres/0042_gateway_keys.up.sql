-- 0042_gateway_keys (postgres, up): frozen by `npm run migrate -- freeze 0042_gateway_keys`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "gateway_keys" (
  "id" serial PRIMARY KEY,
  "tenant_id" integer,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "name" varchar(100) NOT NULL,
  "provider" varchar(20) NOT NULL,
  "key_hash" varchar(64) NOT NULL CONSTRAINT "gateway_keys_key_hash_unique" UNIQUE,
  "key_prefix" varchar(16) NOT NULL,
  "expires_at" timestamp with time zone,
  "daily_token_limit" integer,
  "monthly_token_limit" integer,
  "daily_request_limit" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "last_used_at" timestamp with time zone,
  "revoked_at" timestamp with time zone,
  "revoked_by" integer
);

CREATE INDEX IF NOT EXISTS "gateway_keys_user" ON "gateway_keys" ("user_id");

CREATE INDEX IF NOT EXISTS "gateway_keys_tenant" ON "gateway_keys" ("tenant_id");

CREATE TABLE IF NOT EXISTS "gateway_key_usage" (
  "key_id" integer NOT NULL REFERENCES "gateway_keys"("id") ON DELETE CASCADE,
  "period" varchar(10) NOT NULL,
  "requests" bigint NOT NULL DEFAULT 0,
  "tokens" bigint NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX IF NOT EXISTS "gateway_key_usage_key" ON "gateway_key_usage" ("key_id", "period");
