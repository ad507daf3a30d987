-- 0010_remote_machine_key (postgres, down): frozen by `npm run migrate -- freeze 0010_remote_machine_key`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS "usage_reports_session_received";

ALTER TABLE "remote_machines" DROP COLUMN "machine_key";

ALTER TABLE "agent_sessions" DROP COLUMN "remote_machine_key";

ALTER TABLE "remote_runtime_commands" DROP COLUMN "machine_key";

ALTER TABLE "registration_tokens" DROP COLUMN "machine_id";

ALTER TABLE "registration_tokens" DROP COLUMN "revoked_at";

ALTER TABLE "registration_tokens" DROP COLUMN "revoked_by";
