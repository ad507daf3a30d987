-- 0035_upload_tokens (postgres, up): frozen by `npm run migrate -- freeze 0035_upload_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "upload_tokens" (
  "id" serial PRIMARY KEY,
  "user_id" integer NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "tenant_id" integer,
  "name" varchar(100) NOT NULL,
  "token_hash" varchar(64) NOT NULL CONSTRAINT "upload_tokens_token_hash_unique" UNIQUE,
  "prefix" varchar(16) NOT NULL,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "expires_at" timestamp with time zone,
  "last_used_at" timestamp with time zone,
  "revoked_at" timestamp with time zone,
  "revoked_by" integer
);

CREATE INDEX IF NOT EXISTS "upload_tokens_user" ON "upload_tokens" ("user_id");

CREATE INDEX IF NOT EXISTS "upload_tokens_tenant" ON "upload_tokens" ("tenant_id");
