// The SQL of a session line's transcript (GET .../milestones/:mid/session;
// services/autonomous/transcript.ts): the daily_messages rows the model proxy (and remote prompts)
// recorded for one agent session id, in the order they happened (timestamp, then storage order),
// paged, and their count. The caller has already checked access to the workflow the line belongs to.
import type { DatabaseHandle } from '../../client.ts';
import { type MessageView, messageOf } from '../usage/read-messages.ts';
import { num } from '../usage/read-where.ts';

const COLUMNS = `dm.id, dm.message_id, dm.parent_id, dm.date, dm.tool_name, dm.host_name, dm.role,
  dm.content, dm.tokens_used, dm.input_tokens, dm.output_tokens, dm.model, dm."timestamp", dm.sender_id,
  dm.sender_name, dm.message_source, dm.conversation_id, dm.agent_session_id, dm.user_id, dm.project_path`;

export function sessionTranscriptsRepository(database: Pick<DatabaseHandle, 'sql'>) {
  const { sql } = database;
  return {
    async count(sessionId: string): Promise<number> {
      const [row] = await sql.query<{ n: unknown }>(
        'SELECT COUNT(*) AS n FROM daily_messages dm WHERE dm.agent_session_id = ?',
        [sessionId],
      );
      return num(row?.n);
    },

    async page(sessionId: string, page: { limit: number; offset: number }): Promise<MessageView[]> {
      const rows = await sql.query<Record<string, unknown>>(
        `SELECT ${COLUMNS} FROM daily_messages dm WHERE dm.agent_session_id = ?
         ORDER BY dm."timestamp" IS NULL, dm."timestamp", dm.id LIMIT ? OFFSET ?`,
        [sessionId, page.limit, page.offset],
      );
      return rows.map(messageOf);
    },
  };
}
