-- 0003_remote_runtime (sqlite, up): frozen by `npm run migrate -- freeze 0003_remote_runtime`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE TABLE IF NOT EXISTS "remote_runtime_commands" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "command_id" TEXT NOT NULL CONSTRAINT "remote_runtime_commands_command_id_unique" UNIQUE,
  "machine_id" TEXT NOT NULL,
  "session_id" TEXT,
  "command_type" TEXT NOT NULL,
  "payload" TEXT,
  "status" TEXT NOT NULL DEFAULT 'pending',
  "response_payload" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "delivered_at" INTEGER,
  "responded_at" INTEGER,
  "expires_at" INTEGER
);

CREATE INDEX IF NOT EXISTS "remote_runtime_commands_machine_status" ON "remote_runtime_commands" ("machine_id", "status");

CREATE TABLE IF NOT EXISTS "remote_runtime_outputs" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "session_id" TEXT NOT NULL,
  "event_index" INTEGER NOT NULL,
  "stream" TEXT NOT NULL,
  "payload" TEXT,
  "created_at" INTEGER NOT NULL DEFAULT (cast(unixepoch('subsec') * 1000 as integer)),
  "expires_at" INTEGER
);

CREATE UNIQUE INDEX IF NOT EXISTS "remote_runtime_outputs_session_index" ON "remote_runtime_outputs" ("session_id", "event_index");
