-- 0028_session_provider_error (sqlite, up): frozen by `npm run migrate -- freeze 0028_session_provider_error`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "agent_sessions" ADD COLUMN "last_provider_error" TEXT;

ALTER TABLE "agent_sessions" ADD COLUMN "last_provider_error_at" INTEGER;
