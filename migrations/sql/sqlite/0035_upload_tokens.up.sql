-- 0035_upload_tokens (sqlite, up): frozen by `npm run migrate -- freeze 0035_upload_tokens`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "upload_tokens" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "user_id" INTEGER NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
  "tenant_id" INTEGER,
  "name" TEXT NOT NULL,
  "token_hash" TEXT NOT NULL CONSTRAINT "upload_tokens_token_hash_unique" UNIQUE,
  "prefix" TEXT NOT NULL,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "expires_at" INTEGER,
  "last_used_at" INTEGER,
  "revoked_at" INTEGER,
  "revoked_by" INTEGER
);

CREATE INDEX IF NOT EXISTS "upload_tokens_user" ON "upload_tokens" ("user_id");

CREATE INDEX IF NOT EXISTS "upload_tokens_tenant" ON "upload_tokens" ("tenant_id");
