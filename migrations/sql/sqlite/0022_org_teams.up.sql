-- 0022_org_teams (sqlite, up): frozen by `npm run migrate -- freeze 0022_org_teams`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "teams" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tenant_id" INTEGER NOT NULL,
  "name" TEXT NOT NULL,
  "description" TEXT,
  "managed_by" TEXT,
  "external_id" TEXT,
  "parent_external_id" TEXT,
  "is_active" INTEGER NOT NULL DEFAULT 1,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "teams_tenant_managed_external" ON "teams" ("tenant_id", "managed_by", "external_id");

CREATE TABLE IF NOT EXISTS "team_members" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "team_id" INTEGER NOT NULL REFERENCES "teams"("id") ON DELETE CASCADE,
  "user_id" INTEGER NOT NULL,
  "role" TEXT NOT NULL DEFAULT 'member',
  "managed_by" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "team_members_team_user" ON "team_members" ("team_id", "user_id");

CREATE INDEX IF NOT EXISTS "team_members_user" ON "team_members" ("user_id");

CREATE TABLE IF NOT EXISTS "org_sync_runs" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "run_id" TEXT NOT NULL CONSTRAINT "org_sync_runs_run_id_unique" UNIQUE,
  "platform" TEXT NOT NULL,
  "tenant_id" INTEGER NOT NULL,
  "status" TEXT NOT NULL,
  "started_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "finished_at" INTEGER,
  "counts" TEXT,
  "error" TEXT
);

CREATE INDEX IF NOT EXISTS "org_sync_runs_platform_tenant" ON "org_sync_runs" ("platform", "tenant_id", "started_at");

CREATE TABLE IF NOT EXISTS "org_sync_items" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "run_id" TEXT NOT NULL,
  "kind" TEXT NOT NULL,
  "external_id" TEXT NOT NULL,
  "payload" TEXT NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS "org_sync_items_run_kind_external" ON "org_sync_items" ("run_id", "kind", "external_id");
