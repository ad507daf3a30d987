-- 0014_usage_read_indexes (sqlite, up): frozen by `npm run migrate -- freeze 0014_usage_read_indexes`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

CREATE INDEX IF NOT EXISTS daily_messages_requests_tenant ON daily_messages (tenant_id, tool_name, host_name, date) WHERE role = 'assistant';

CREATE INDEX IF NOT EXISTS daily_messages_requests_date ON daily_messages (date, tenant_id, tool_name, host_name) WHERE role = 'assistant';

CREATE INDEX IF NOT EXISTS daily_messages_conversation ON daily_messages (conversation_id) WHERE conversation_id IS NOT NULL;
