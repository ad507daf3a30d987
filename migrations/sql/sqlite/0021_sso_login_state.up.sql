-- 0021_sso_login_state (sqlite, up): frozen by `npm run migrate -- freeze 0021_sso_login_state`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "sso_login_states" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "state_hash" TEXT NOT NULL CONSTRAINT "sso_login_states_state_hash_unique" UNIQUE,
  "provider_name" TEXT NOT NULL,
  "kind" TEXT NOT NULL,
  "nonce" TEXT,
  "code_verifier" TEXT,
  "saml_request_id" TEXT,
  "return_to" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "expires_at" INTEGER NOT NULL,
  "consumed_at" INTEGER
);

CREATE TABLE IF NOT EXISTS "sso_consumed_assertions" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "provider_name" TEXT NOT NULL,
  "assertion_id" TEXT NOT NULL,
  "expires_at" INTEGER NOT NULL,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "sso_consumed_assertions_key" ON "sso_consumed_assertions" ("provider_name", "assertion_id");
