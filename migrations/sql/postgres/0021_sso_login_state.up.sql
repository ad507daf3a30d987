-- 0021_sso_login_state (postgres, up): frozen by `npm run migrate -- freeze 0021_sso_login_state`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "sso_login_states" (
  "id" serial PRIMARY KEY,
  "state_hash" varchar(64) NOT NULL CONSTRAINT "sso_login_states_state_hash_unique" UNIQUE,
  "provider_name" varchar(100) NOT NULL,
  "kind" varchar(10) NOT NULL,
  "nonce" text,
  "code_verifier" text,
  "saml_request_id" varchar(255),
  "return_to" varchar(500),
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "expires_at" timestamp with time zone NOT NULL,
  "consumed_at" timestamp with time zone
);

CREATE TABLE IF NOT EXISTS "sso_consumed_assertions" (
  "id" serial PRIMARY KEY,
  "provider_name" varchar(100) NOT NULL,
  "assertion_id" varchar(255) NOT NULL,
  "expires_at" timestamp with time zone NOT NULL,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "sso_consumed_assertions_key" ON "sso_consumed_assertions" ("provider_name", "assertion_id");
