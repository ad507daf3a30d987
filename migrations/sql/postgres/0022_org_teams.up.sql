-- 0022_org_teams (postgres, up): frozen by `npm run migrate -- freeze 0022_org_teams`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "teams" (
  "id" serial PRIMARY KEY,
  "tenant_id" integer NOT NULL,
  "name" varchar(200) NOT NULL,
  "description" text,
  "managed_by" varchar(20),
  "external_id" varchar(100),
  "parent_external_id" varchar(100),
  "is_active" boolean NOT NULL DEFAULT true,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "teams_tenant_managed_external" ON "teams" ("tenant_id", "managed_by", "external_id");

CREATE TABLE IF NOT EXISTS "team_members" (
  "id" serial PRIMARY KEY,
  "team_id" integer NOT NULL REFERENCES "teams"("id") ON DELETE CASCADE,
  "user_id" integer NOT NULL,
  "role" varchar(20) NOT NULL DEFAULT 'member',
  "managed_by" varchar(20),
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "team_members_team_user" ON "team_members" ("team_id", "user_id");

CREATE INDEX IF NOT EXISTS "team_members_user" ON "team_members" ("user_id");

CREATE TABLE IF NOT EXISTS "org_sync_runs" (
  "id" serial PRIMARY KEY,
  "run_id" varchar(100) NOT NULL CONSTRAINT "org_sync_runs_run_id_unique" UNIQUE,
  "platform" varchar(20) NOT NULL,
  "tenant_id" integer NOT NULL,
  "status" varchar(20) NOT NULL,
  "started_at" timestamp with time zone NOT NULL DEFAULT now(),
  "finished_at" timestamp with time zone,
  "counts" text,
  "error" text
);

CREATE INDEX IF NOT EXISTS "org_sync_runs_platform_tenant" ON "org_sync_runs" ("platform", "tenant_id", "started_at");

CREATE TABLE IF NOT EXISTS "org_sync_items" (
  "id" serial PRIMARY KEY,
  "run_id" varchar(100) NOT NULL,
  "kind" varchar(12) NOT NULL,
  "external_id" varchar(100) NOT NULL,
  "payload" text NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS "org_sync_items_run_kind_external" ON "org_sync_items" ("run_id", "kind", "external_id");
