-- 0004_proxy_tokens (postgres, up): frozen by `npm run migrate -- freeze 0004_proxy_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "proxy_tokens" (
  "jti" varchar(64) PRIMARY KEY,
  "session_id" varchar(64) NOT NULL,
  "user_id" integer NOT NULL,
  "tenant_id" integer,
  "provider" varchar(20) NOT NULL,
  "session_type" varchar(30) NOT NULL DEFAULT 'general',
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "expires_at" timestamp with time zone NOT NULL,
  "revoked_at" timestamp with time zone,
  "revoked_reason" varchar(30)
);

CREATE INDEX IF NOT EXISTS "proxy_tokens_session" ON "proxy_tokens" ("session_id");

CREATE TABLE IF NOT EXISTS "usage_reports" (
  "id" serial PRIMARY KEY,
  "report_id" varchar(128) NOT NULL CONSTRAINT "usage_reports_report_id_unique" UNIQUE,
  "session_id" varchar(64),
  "machine_id" varchar(64),
  "user_id" integer,
  "input_tokens" integer NOT NULL DEFAULT 0,
  "output_tokens" integer NOT NULL DEFAULT 0,
  "model" varchar(100),
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);
