-- 0034_tenant_autonomous (postgres, up): frozen by `npm run migrate -- freeze 0034_tenant_autonomous`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "tenant_autonomous_settings" (
  "tenant_id" integer PRIMARY KEY REFERENCES "tenants"("id") ON DELETE CASCADE,
  "run_roles" varchar(200) NOT NULL DEFAULT 'tenant_admin,manager,user',
  "github_token_encrypted" text,
  "github_token_hint" varchar(8),
  "updated_by" integer,
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);
