import { defineMigration } from '../migration.ts';

// Request counting (spec rule 3: assistant messages in daily_messages) without reading the table:
// two partial indexes over the assistant messages only, one led by tenant (totals per tenant and
// tool: /api/summary), one led by date (every date range: trend, today, by-tool, monthly), each
// covering tenant, tool, host and date so the counts are index-only. The conversation index serves
// the conversation endpoints for messages that carry a conversation_id but no agent session.
export default defineMigration({
  id: '0014_usage_read_indexes',
  kind: 'expand',
  description:
    'usage read indexes: partial indexes over assistant messages (by tenant and tool, by date) for request counts; conversation_id index',
  async up(sql) {
    await sql.exec(
      "CREATE INDEX IF NOT EXISTS daily_messages_requests_tenant ON daily_messages (tenant_id, tool_name, host_name, date) WHERE role = 'assistant'",
    );
    await sql.exec(
      "CREATE INDEX IF NOT EXISTS daily_messages_requests_date ON daily_messages (date, tenant_id, tool_name, host_name) WHERE role = 'assistant'",
    );
    await sql.exec(
      'CREATE INDEX IF NOT EXISTS daily_messages_conversation ON daily_messages (conversation_id) WHERE conversation_id IS NOT NULL',
    );
  },
  async down(sql) {
    await sql.exec('DROP INDEX IF EXISTS daily_messages_conversation');
    await sql.exec('DROP INDEX IF EXISTS daily_messages_requests_date');
    await sql.exec('DROP INDEX IF EXISTS daily_messages_requests_tenant');
  },
});
