-- 0040_session_cli_started (sqlite, down): frozen by `npm run migrate -- freeze 0040_session_cli_started`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "agent_sessions" DROP COLUMN "cli_started_at";
