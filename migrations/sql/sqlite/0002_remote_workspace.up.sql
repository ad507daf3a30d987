-- 0002_remote_workspace (sqlite, up): frozen by `npm run migrate -- freeze 0002_remote_workspace`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "remote_machines" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "machine_id" TEXT NOT NULL CONSTRAINT "remote_machines_machine_id_unique" UNIQUE,
  "machine_name" TEXT NOT NULL,
  "hostname" TEXT,
  "os_type" TEXT,
  "os_version" TEXT,
  "ip_address" TEXT,
  "status" TEXT NOT NULL DEFAULT 'offline',
  "capabilities" TEXT,
  "agent_version" TEXT,
  "cli_path" TEXT,
  "work_dir" TEXT,
  "tenant_id" INTEGER,
  "created_by" INTEGER,
  "agent_token_hash" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "last_heartbeat" INTEGER
);

CREATE INDEX IF NOT EXISTS "remote_machines_tenant" ON "remote_machines" ("tenant_id");

CREATE TABLE IF NOT EXISTS "machine_assignments" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "machine_id" TEXT NOT NULL REFERENCES "remote_machines"("machine_id") ON DELETE CASCADE,
  "user_id" INTEGER NOT NULL,
  "permission" TEXT NOT NULL DEFAULT 'user',
  "granted_by" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer))
);

CREATE UNIQUE INDEX IF NOT EXISTS "machine_assignments_key" ON "machine_assignments" ("machine_id", "user_id");

CREATE TABLE IF NOT EXISTS "api_key_store" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "tenant_id" INTEGER,
  "provider" TEXT NOT NULL,
  "key_name" TEXT NOT NULL,
  "encrypted_key" TEXT NOT NULL,
  "key_hash" TEXT NOT NULL,
  "base_url" TEXT,
  "is_active" INTEGER NOT NULL DEFAULT 1,
  "created_by" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "updated_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "cli_tools" TEXT,
  "cli_settings" TEXT
);

CREATE INDEX IF NOT EXISTS "api_key_store_tenant_provider" ON "api_key_store" ("tenant_id", "provider");

CREATE TABLE IF NOT EXISTS "registration_tokens" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "token_hash" TEXT NOT NULL CONSTRAINT "registration_tokens_token_hash_unique" UNIQUE,
  "tenant_id" INTEGER NOT NULL,
  "created_by" INTEGER,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "expires_at" INTEGER,
  "consumed_at" INTEGER,
  "consumed_by_machine_id" TEXT
);

ALTER TABLE "agent_sessions" ADD COLUMN "workspace_type" TEXT NOT NULL DEFAULT 'local';

ALTER TABLE "agent_sessions" ADD COLUMN "remote_machine_id" TEXT;

ALTER TABLE "agent_sessions" ADD COLUMN "paused_at" INTEGER;
