-- 0012_usage_uploads (postgres, up): frozen by `npm run migrate -- freeze 0012_usage_uploads`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "usage_uploads" (
  "id" serial PRIMARY KEY,
  "tenant_id" integer NOT NULL DEFAULT 1 REFERENCES "tenants"("id") ON DELETE CASCADE,
  "date" varchar(10) NOT NULL,
  "tool_name" varchar(100) NOT NULL,
  "host_name" varchar(255) NOT NULL DEFAULT 'localhost',
  "tokens_used" bigint NOT NULL DEFAULT 0,
  "input_tokens" bigint NOT NULL DEFAULT 0,
  "output_tokens" bigint NOT NULL DEFAULT 0,
  "cache_tokens" bigint NOT NULL DEFAULT 0,
  "request_count" bigint NOT NULL DEFAULT 0,
  "models_used" text,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "usage_uploads_key" ON "usage_uploads" ("tenant_id", "date", "tool_name", "host_name");
