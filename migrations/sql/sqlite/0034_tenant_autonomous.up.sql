-- 0034_tenant_autonomous (sqlite, up): frozen by `npm run migrate -- freeze 0034_tenant_autonomous`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "tenant_autonomous_settings" (
  "tenant_id" INTEGER PRIMARY KEY REFERENCES "tenants"("id") ON DELETE CASCADE,
  "run_roles" TEXT NOT NULL DEFAULT 'tenant_admin,manager,user',
  "github_token_encrypted" TEXT,
  "github_token_hint" TEXT,
  "updated_by" INTEGER,
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);
