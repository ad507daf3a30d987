-- 0003_remote_runtime (postgres, up): frozen by `npm run migrate -- freeze 0003_remote_runtime`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "remote_runtime_commands" (
  "id" serial PRIMARY KEY,
  "command_id" varchar(64) NOT NULL CONSTRAINT "remote_runtime_commands_command_id_unique" UNIQUE,
  "machine_id" varchar(64) NOT NULL,
  "session_id" varchar(64),
  "command_type" varchar(50) NOT NULL,
  "payload" text,
  "status" varchar(12) NOT NULL DEFAULT 'pending',
  "response_payload" text,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "delivered_at" timestamp with time zone,
  "responded_at" timestamp with time zone,
  "expires_at" timestamp with time zone
);

CREATE INDEX IF NOT EXISTS "remote_runtime_commands_machine_status" ON "remote_runtime_commands" ("machine_id", "status");

CREATE TABLE IF NOT EXISTS "remote_runtime_outputs" (
  "id" serial PRIMARY KEY,
  "session_id" varchar(64) NOT NULL,
  "event_index" integer NOT NULL,
  "stream" varchar(20) NOT NULL,
  "payload" text,
  "created_at" timestamp with time zone NOT NULL DEFAULT now(),
  "expires_at" timestamp with time zone
);

CREATE UNIQUE INDEX IF NOT EXISTS "remote_runtime_outputs_session_index" ON "remote_runtime_outputs" ("session_id", "event_index");
