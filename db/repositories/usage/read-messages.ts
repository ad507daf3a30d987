// The SQL of the message read APIs (spec document 2, "Messages"): filtered, paginated listing and
// counting of daily_messages with full-text search (db/full-text.ts), the senders, conversations
// (messages grouped by agent_session_id, else conversation_id) and one conversation's messages and
// session row. Every query carries the caller's tenant scope on daily_messages.tenant_id
// (agent_sessions.tenant_id for session rows). Raw SQL with `?` placeholders on both dialects.
import type { FilterMatch } from '../../../domain/content-filter/rules.ts';
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { RawSql } from '../../client.ts';
import { messageSearchCondition } from '../../full-text.ts';
import { REQUESTS_OF } from './read-requests.ts';
import { isoOf, num, scopedWhere, type Where } from './read-where.ts';

export interface MessageFilter {
  date?: string;
  start?: string;
  end?: string;
  tool?: string;
  host?: string;
  sender?: string;
  role?: string;
  search?: string;
}

export interface Page {
  limit: number;
  offset: number;
}

const MESSAGE_COLUMNS = `dm.id, dm.message_id, dm.parent_id, dm.date, dm.tool_name, dm.host_name, dm.role,
  dm.content, dm.tokens_used, dm.input_tokens, dm.output_tokens, dm.model, dm."timestamp", dm.sender_id,
  dm.sender_name, dm.message_source, dm.conversation_id, dm.agent_session_id, dm.user_id, dm.project_path,
  dm.filter_verdict, dm.filter_rules`;

/** The conversation a message belongs to: its agent session, else its conversation id. */
const CONVERSATION = 'COALESCE(dm.agent_session_id, dm.conversation_id)';

type MessageDbRow = Record<string, unknown>;

export const messageOf = (r: MessageDbRow) => ({
  id: num(r.id),
  message_id: r.message_id as string,
  parent_id: (r.parent_id as string | null) ?? null,
  date: r.date as string,
  tool_name: r.tool_name as string,
  host_name: r.host_name as string,
  role: r.role as string,
  content: (r.content as string | null) ?? null,
  tokens_used: num(r.tokens_used),
  input_tokens: num(r.input_tokens),
  output_tokens: num(r.output_tokens),
  model: (r.model as string | null) ?? null,
  timestamp: isoOf(r.timestamp),
  sender_id: (r.sender_id as string | null) ?? null,
  sender_name: (r.sender_name as string | null) ?? null,
  message_source: (r.message_source as string | null) ?? null,
  conversation_id: (r.conversation_id as string | null) ?? null,
  agent_session_id: (r.agent_session_id as string | null) ?? null,
  user_id: r.user_id == null ? null : num(r.user_id),
  project_path: (r.project_path as string | null) ?? null,
  // Extra fields (issue 28 item 5): the content filter's verdict and the rules behind it, null when clean.
  filter_verdict: (r.filter_verdict as string | null) ?? null,
  filter_rules: filterRulesOf(r.filter_rules),
});

/** The stored matched rules (JSON text); [] for none or for text that is not a rule list. */
function filterRulesOf(v: unknown): FilterMatch[] {
  if (typeof v !== 'string' || v === '') return [];
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? (parsed as FilterMatch[]) : [];
  } catch {
    return [];
  }
}
export type MessageView = ReturnType<typeof messageOf>;

export function messageReadRepository(db: RawSql) {
  /** null: nothing can match (scope `none`, or a search without a word). */
  function messageWhere(scope: ReadScope, f: MessageFilter): Where | null {
    const w = scopedWhere(scope, 'dm.tenant_id');
    if (!w) return null;
    w.eq('dm.date', f.date);
    if (f.start !== undefined) w.and('dm.date >= ?', f.start);
    if (f.end !== undefined) w.and('dm.date <= ?', f.end);
    w.eq('dm.tool_name', f.tool)
      .eq('dm.host_name', f.host)
      .eq('dm.sender_name', f.sender)
      .eq('dm.role', f.role);
    if (f.search !== undefined) {
      const match = messageSearchCondition(db.dialect, f.search, 'dm');
      if (!match) return null;
      w.and(match.sql, ...match.params);
    }
    return w;
  }

  return {
    /**
     * Newest first: by day, then by timestamp (messages without one after those with one), then by
     * storage order, newest stored first.
     */
    async list(scope: ReadScope, f: MessageFilter, p: Page): Promise<MessageView[]> {
      const w = messageWhere(scope, f);
      if (!w) return [];
      const rows = await db.query<MessageDbRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM daily_messages dm ${w.sql}
         ORDER BY dm.date DESC, dm."timestamp" IS NULL, dm."timestamp" DESC, dm.id DESC LIMIT ? OFFSET ?`,
        [...w.params, p.limit, p.offset],
      );
      return rows.map(messageOf);
    },

    async count(scope: ReadScope, f: MessageFilter): Promise<number> {
      const w = messageWhere(scope, f);
      if (!w) return 0;
      const [row] = await db.query<{ n: unknown }>(
        `SELECT COUNT(*) AS n FROM daily_messages dm ${w.sql}`,
        w.params,
      );
      return num(row?.n);
    },

    /** Sender names with their message counts and last day, most messages first. */
    async senders(scope: ReadScope, host: string | undefined) {
      const w = messageWhere(scope, { host });
      if (!w) return [];
      w.and('dm.sender_name IS NOT NULL');
      const rows = await db.query<{ sender_name: string; n: unknown; last_date: string; user_id: unknown }>(
        `SELECT dm.sender_name, COUNT(*) AS n, MAX(dm.date) AS last_date, MAX(dm.user_id) AS user_id
         FROM daily_messages dm ${w.sql} GROUP BY dm.sender_name ORDER BY n DESC, dm.sender_name`,
        w.params,
      );
      return rows.map((r) => ({
        sender_name: r.sender_name,
        user_id: r.user_id == null ? null : num(r.user_id),
        message_count: num(r.n),
        last_date: r.last_date,
      }));
    },

    /** Conversations (messages with a session or conversation id), most recently active first. */
    async conversations(scope: ReadScope, f: MessageFilter, p: Page) {
      const w = messageWhere(scope, f);
      if (!w) return [];
      w.and(`${CONVERSATION} IS NOT NULL`);
      const rows = await db.query<Record<string, unknown>>(
        `SELECT ${CONVERSATION} AS session_id, MIN(dm.date) AS first_date, MAX(dm.date) AS last_date,
                MIN(dm."timestamp") AS started_at, MAX(dm."timestamp") AS last_at,
                MIN(dm.tool_name) AS tool_name, MIN(dm.host_name) AS host_name,
                MIN(dm.sender_name) AS sender_name, COUNT(*) AS message_count,
                ${REQUESTS_OF('dm')} AS requests,
                COALESCE(SUM(dm.tokens_used), 0) AS tokens, MAX(dm.id) AS last_id
         FROM daily_messages dm ${w.sql}
         GROUP BY ${CONVERSATION}
         ORDER BY last_date DESC, last_id DESC LIMIT ? OFFSET ?`,
        [...w.params, p.limit, p.offset],
      );
      return rows.map((r) => ({
        session_id: r.session_id as string,
        tool_name: r.tool_name as string,
        host_name: r.host_name as string,
        sender_name: (r.sender_name as string | null) ?? null,
        first_date: r.first_date as string,
        last_date: r.last_date as string,
        started_at: isoOf(r.started_at),
        last_message_at: isoOf(r.last_at),
        message_count: num(r.message_count),
        requests: num(r.requests),
        tokens: num(r.tokens),
      }));
    },

    /** A conversation's messages in the scope, oldest first. */
    async conversationMessages(scope: ReadScope, sessionId: string): Promise<MessageView[]> {
      const w = scopedWhere(scope, 'dm.tenant_id');
      if (!w) return [];
      const bySession = w.and('dm.agent_session_id = ?', sessionId);
      const order = 'ORDER BY dm."timestamp" IS NULL, dm."timestamp", dm.id';
      const rows = await db.query<MessageDbRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM daily_messages dm ${bySession.sql} ${order}`,
        bySession.params,
      );
      if (rows.length) return rows.map(messageOf);
      const w2 = scopedWhere(scope, 'dm.tenant_id')!;
      w2.and('dm.agent_session_id IS NULL').and('dm.conversation_id = ?', sessionId);
      const byConversation = await db.query<MessageDbRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM daily_messages dm ${w2.sql} ${order}`,
        w2.params,
      );
      return byConversation.map(messageOf);
    },

    /** The agent_sessions row of this id inside the scope, if any. */
    async sessionRow(scope: ReadScope, sessionId: string) {
      const w = scopedWhere(scope, 'tenant_id');
      if (!w) return null;
      w.and('session_id = ?', sessionId);
      const [r] = await db.query<Record<string, unknown>>(
        `SELECT session_id, tenant_id, session_type, title, tool_name, host_name, user_id, status, model,
                project_path, workspace_type, total_tokens, message_count, request_count, created_at,
                updated_at, completed_at
         FROM agent_sessions ${w.sql}`,
        w.params,
      );
      if (!r) return null;
      return {
        session_id: r.session_id as string,
        tenant_id: num(r.tenant_id),
        session_type: r.session_type as string,
        title: (r.title as string | null) ?? null,
        tool_name: r.tool_name as string,
        host_name: r.host_name as string,
        user_id: r.user_id == null ? null : num(r.user_id),
        status: r.status as string,
        model: (r.model as string | null) ?? null,
        project_path: (r.project_path as string | null) ?? null,
        workspace_type: r.workspace_type as string,
        total_tokens: num(r.total_tokens),
        message_count: num(r.message_count),
        request_count: num(r.request_count),
        created_at: isoOf(r.created_at),
        updated_at: isoOf(r.updated_at),
        completed_at: isoOf(r.completed_at),
      };
    },
  };
}
