-- 0028_session_provider_error (postgres, down): frozen by `npm run migrate -- freeze 0028_session_provider_error`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "agent_sessions" DROP COLUMN "last_provider_error";

ALTER TABLE "agent_sessions" DROP COLUMN "last_provider_error_at";
