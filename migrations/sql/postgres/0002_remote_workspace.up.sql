-- 0002_remote_workspace (postgres, up): frozen by `npm run migrate -- freeze 0002_remote_workspace`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "remote_machines" (
  "id" serial PRIMARY KEY,
  "machine_id" varchar(64) NOT NULL CONSTRAINT "remote_machines_machine_id_unique" UNIQUE,
  "machine_name" varchar(255) NOT NULL,
  "hostname" varchar(255),
  "os_type" varchar(50),
  "os_version" varchar(100),
  "ip_address" varchar(64),
  "status" varchar(10) NOT NULL DEFAULT 'offline',
  "capabilities" text,
  "agent_version" varchar(50),
  "cli_path" varchar(500),
  "work_dir" varchar(500),
  "tenant_id" integer,
  "created_by" integer,
  "agent_token_hash" varchar(128),
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now(),
  "last_heartbeat" timestamp with time zone
);

CREATE INDEX IF NOT EXISTS "remote_machines_tenant" ON "remote_machines" ("tenant_id");

CREATE TABLE IF NOT EXISTS "machine_assignments" (
  "id" serial PRIMARY KEY,
  "machine_id" varchar(64) NOT NULL REFERENCES "remote_machines"("machine_id") ON DELETE CASCADE,
  "user_id" integer NOT NULL,
  "permission" varchar(10) NOT NULL DEFAULT 'user',
  "granted_by" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS "machine_assignments_key" ON "machine_assignments" ("machine_id", "user_id");

CREATE TABLE IF NOT EXISTS "api_key_store" (
  "id" serial PRIMARY KEY,
  "tenant_id" integer,
  "provider" varchar(20) NOT NULL,
  "key_name" varchar(255) NOT NULL,
  "encrypted_key" text NOT NULL,
  "key_hash" varchar(128) NOT NULL,
  "base_url" varchar(500),
  "is_active" boolean NOT NULL DEFAULT true,
  "created_by" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "updated_at" timestamp with time zone NOT NULL DEFAULT now(),
  "cli_tools" text,
  "cli_settings" text
);

CREATE INDEX IF NOT EXISTS "api_key_store_tenant_provider" ON "api_key_store" ("tenant_id", "provider");

CREATE TABLE IF NOT EXISTS "registration_tokens" (
  "id" serial PRIMARY KEY,
  "token_hash" varchar(128) NOT NULL CONSTRAINT "registration_tokens_token_hash_unique" UNIQUE,
  "tenant_id" integer NOT NULL,
  "created_by" integer,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "expires_at" timestamp with time zone,
  "consumed_at" timestamp with time zone,
  "consumed_by_machine_id" varchar(64)
);

ALTER TABLE "agent_sessions" ADD COLUMN "workspace_type" varchar(10) NOT NULL DEFAULT 'local';

ALTER TABLE "agent_sessions" ADD COLUMN "remote_machine_id" varchar(64);

ALTER TABLE "agent_sessions" ADD COLUMN "paused_at" timestamp with time zone;
