-- 0002_remote_workspace (postgres, down): frozen by `npm run migrate -- freeze 0002_remote_workspace`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "agent_sessions" DROP COLUMN "workspace_type";

ALTER TABLE "agent_sessions" DROP COLUMN "remote_machine_id";

ALTER TABLE "agent_sessions" DROP COLUMN "paused_at";

DROP TABLE IF EXISTS "registration_tokens";

DROP TABLE IF EXISTS "api_key_store";

DROP TABLE IF EXISTS "machine_assignments";

DROP TABLE IF EXISTS "remote_machines";
