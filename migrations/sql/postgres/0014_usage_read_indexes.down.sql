-- 0014_usage_read_indexes (postgres, down): frozen by `npm run migrate -- freeze 0014_usage_read_indexes`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS daily_messages_conversation;

DROP INDEX IF EXISTS daily_messages_requests_date;

DROP INDEX IF EXISTS daily_messages_requests_tenant;
