// The SQL of the analysis and analytics endpoints (spec document 2, "Analysis and analytics"): grouped
// reads over daily_usage (tokens of every source, by day, tool and host) with the requests of the same
// cells from the one request count (db/repositories/usage/read-requests.ts, rule 3), daily_messages
// (hours, messages, conversations, senders), user_daily_stats with users (per user and day) and
// agent_sessions. Every read takes the caller's read scope and applies it through the one helper
// (db/tenant-scope-sql.ts) on the table's own tenant column (users.tenant_id for user_daily_stats,
// which has none); a scope that sees nothing answers empty without a query.
//
// Dialect difference, kept here once: `daily_messages.timestamp` is integer milliseconds on SQLite and
// timestamptz on PostgreSQL, so the UTC hour of a message is computed per dialect (0 when a message
// has no timestamp, as ingestion buckets it in hourly_stats). PostgreSQL sums of bigint come back as
// numeric strings: every figure goes through Number().
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { RawSql } from '../../client.ts';
import { rawScopeCondition } from '../../tenant-scope-sql.ts';
import { REQUESTS_OF, requestReadRepository } from '../usage/read-requests.ts';

export interface DayRange {
  start: string;
  end: string;
}
export interface UsageFilter extends DayRange {
  tool?: string;
  host?: string;
}

export interface UsageCell {
  date: string;
  toolName: string;
  hostName: string;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheTokens: number;
  requests: number;
}
export interface HourCell {
  date: string;
  hour: number;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  messages: number;
  requests: number;
}
export interface UserDayRow {
  userId: number;
  username: string;
  tenantId: number | null;
  date: string;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  requests: number;
}
export interface SenderDayRow {
  date: string;
  toolName: string;
  hostName: string;
  senderName: string;
  tenantId: number;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  messages: number;
  requests: number;
}

const n = (v: unknown): number => (v == null ? 0 : Number(v));
const REQUESTS = REQUESTS_OF('m');

/** WHERE parts and parameters, built in order. */
class Where {
  readonly parts: string[] = [];
  readonly params: unknown[] = [];
  add(sql: string, ...params: unknown[]) {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }
  get sql() {
    return this.parts.length ? `WHERE ${this.parts.join(' AND ')}` : '';
  }
}

/** The scope on `column`, then the filters; null when the scope sees nothing. */
function scoped(scope: ReadScope, column: string, alias: string, f?: Partial<UsageFilter>): Where | null {
  const c = rawScopeCondition(scope, column);
  if (c === false) return null;
  const w = new Where();
  if (c) w.add(c.sql, ...c.params);
  if (f?.start) w.add(`${alias}.date >= ?`, f.start);
  if (f?.end) w.add(`${alias}.date <= ?`, f.end);
  if (f?.tool) w.add(`${alias}.tool_name = ?`, f.tool);
  if (f?.host) w.add(`${alias}.host_name = ?`, f.host);
  return w;
}

export function analyticsReadRepository(db: RawSql) {
  const hourExpr =
    db.dialect === 'postgres'
      ? `COALESCE(CAST(EXTRACT(HOUR FROM m."timestamp" AT TIME ZONE 'UTC') AS INTEGER), 0)`
      : `COALESCE(CAST((m."timestamp" / 3600000) % 24 AS INTEGER), 0)`;

  return {
    /**
     * daily_usage summed over tenants in scope, by day, tool and host, with each cell's requests (its
     * assistant messages: a cell may have requests and no tokens, or tokens and no requests).
     */
    async usageCells(scope: ReadScope, f: UsageFilter): Promise<UsageCell[]> {
      const w = scoped(scope, 'u.tenant_id', 'u', f);
      if (!w) return [];
      const [rows, requests] = await Promise.all([
        db.query<Record<string, unknown>>(
          `SELECT u.date, u.tool_name, u.host_name, SUM(u.tokens_used) AS tokens, SUM(u.input_tokens) AS input_tokens,
                  SUM(u.output_tokens) AS output_tokens, SUM(u.cache_tokens) AS cache_tokens
           FROM daily_usage u ${w.sql}
           GROUP BY u.date, u.tool_name, u.host_name`,
          w.params,
        ),
        requestReadRepository(db).byDayToolHost(scope, f),
      ]);
      const key = (c: { date: string; toolName: string; hostName: string }) =>
        `${c.date}\u0000${c.toolName}\u0000${c.hostName}`;
      const cells = new Map<string, UsageCell>();
      for (const r of rows) {
        const c: UsageCell = {
          date: String(r.date),
          toolName: String(r.tool_name),
          hostName: String(r.host_name),
          tokens: n(r.tokens),
          inputTokens: n(r.input_tokens),
          outputTokens: n(r.output_tokens),
          cacheTokens: n(r.cache_tokens),
          requests: 0,
        };
        cells.set(key(c), c);
      }
      for (const r of requests) {
        const c = cells.get(key(r));
        if (c) c.requests = r.requests;
        else cells.set(key(r), { ...r, tokens: 0, inputTokens: 0, outputTokens: 0, cacheTokens: 0 });
      }
      const order = (c: UsageCell) => [c.date, c.toolName, c.hostName];
      return [...cells.values()].sort((a, b) => {
        const [x, y] = [order(a), order(b)];
        for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
        return 0;
      });
    },

    /** daily_messages by day and UTC hour (hours without messages are absent). */
    async hourCells(scope: ReadScope, f: UsageFilter): Promise<HourCell[]> {
      const w = scoped(scope, 'm.tenant_id', 'm', f);
      if (!w) return [];
      const rows = await db.query<Record<string, unknown>>(
        `SELECT m.date, ${hourExpr} AS hr, SUM(m.tokens_used) AS tokens, SUM(m.input_tokens) AS input_tokens,
                SUM(m.output_tokens) AS output_tokens, COUNT(*) AS messages, ${REQUESTS} AS requests
         FROM daily_messages m ${w.sql}
         GROUP BY m.date, ${hourExpr}
         ORDER BY m.date, hr`,
        w.params,
      );
      return rows.map((r) => ({
        date: String(r.date),
        hour: n(r.hr),
        tokens: n(r.tokens),
        inputTokens: n(r.input_tokens),
        outputTokens: n(r.output_tokens),
        messages: n(r.messages),
        requests: n(r.requests),
      }));
    },

    /**
     * user_daily_stats of live users in scope (scope on users.tenant_id). user_daily_stats has no host:
     * with `host`, the same figures are summed from that host's messages instead.
     */
    async userDays(scope: ReadScope, f: DayRange & { host?: string }): Promise<UserDayRow[]> {
      const w = scoped(scope, 'us.tenant_id', 's', f.host === undefined ? f : { start: f.start, end: f.end });
      if (!w) return [];
      w.add('us.deleted_at IS NULL');
      const source =
        f.host === undefined
          ? 'user_daily_stats'
          : `(SELECT m.user_id, m.date, SUM(m.tokens_used) AS tokens, SUM(m.input_tokens) AS input_tokens,
                     SUM(m.output_tokens) AS output_tokens, ${REQUESTS} AS requests
              FROM daily_messages m WHERE m.user_id IS NOT NULL AND m.host_name = ?
              GROUP BY m.user_id, m.date)`;
      const rows = await db.query<Record<string, unknown>>(
        `SELECT s.user_id, us.username, us.tenant_id, s.date, s.tokens, s.input_tokens, s.output_tokens, s.requests
         FROM ${source} s JOIN users us ON us.id = s.user_id ${w.sql}
         ORDER BY s.user_id, s.date`,
        f.host === undefined ? w.params : [f.host, ...w.params],
      );
      return rows.map((r) => ({
        userId: n(r.user_id),
        username: String(r.username),
        tenantId: r.tenant_id == null ? null : n(r.tenant_id),
        date: String(r.date),
        tokens: n(r.tokens),
        inputTokens: n(r.input_tokens),
        outputTokens: n(r.output_tokens),
        requests: n(r.requests),
      }));
    },

    /** Live, active users in scope. */
    async users(scope: ReadScope): Promise<{ id: number; username: string; tenantId: number | null }[]> {
      const w = scoped(scope, 'us.tenant_id', 'us');
      if (!w) return [];
      w.add('us.deleted_at IS NULL').add('us.is_active = ?', true);
      const rows = await db.query<Record<string, unknown>>(
        `SELECT us.id, us.username, us.tenant_id FROM users us ${w.sql} ORDER BY us.id`,
        w.params,
      );
      return rows.map((r) => ({
        id: n(r.id),
        username: String(r.username),
        tenantId: r.tenant_id == null ? null : n(r.tenant_id),
      }));
    },

    /** Message counts in the window: messages, requests (rule 3), distinct senders and users. */
    async messageTotals(scope: ReadScope, f: UsageFilter) {
      const w = scoped(scope, 'm.tenant_id', 'm', f);
      if (!w) return { messages: 0, requests: 0, senders: 0, users: 0 };
      const [r] = await db.query<Record<string, unknown>>(
        `SELECT COUNT(*) AS messages, ${REQUESTS} AS requests, COUNT(DISTINCT m.sender_name) AS senders,
                COUNT(DISTINCT m.user_id) AS users
         FROM daily_messages m ${w.sql}`,
        w.params,
      );
      return {
        messages: n(r?.messages),
        requests: n(r?.requests),
        senders: n(r?.senders),
        users: n(r?.users),
      };
    },

    /**
     * Conversations in the window: messages grouped by their agent session, else their conversation id
     * (messages with neither belong to none).
     */
    async conversationSizes(scope: ReadScope, f: DayRange) {
      const w = scoped(scope, 'm.tenant_id', 'm', f);
      if (!w) return [];
      w.add('COALESCE(m.agent_session_id, m.conversation_id) IS NOT NULL');
      const rows = await db.query<Record<string, unknown>>(
        `SELECT COALESCE(m.agent_session_id, m.conversation_id) AS conv, MIN(m.tool_name) AS tool_name,
                COUNT(*) AS messages, ${REQUESTS} AS requests, SUM(m.tokens_used) AS tokens,
                COUNT(DISTINCT m.date) AS days
         FROM daily_messages m ${w.sql}
         GROUP BY COALESCE(m.agent_session_id, m.conversation_id)`,
        w.params,
      );
      return rows.map((r) => ({
        conversation: String(r.conv),
        toolName: String(r.tool_name),
        messages: n(r.messages),
        requests: n(r.requests),
        tokens: n(r.tokens),
        days: n(r.days),
      }));
    },

    /** agent_sessions in scope created in the window, by status. */
    async sessionsByStatus(scope: ReadScope, from: Date, before: Date) {
      const w = scoped(scope, 's.tenant_id', 's');
      if (!w) return [];
      w.add('s.created_at >= ?', from).add('s.created_at < ?', before);
      const rows = await db.query<Record<string, unknown>>(
        `SELECT s.status, COUNT(*) AS sessions FROM agent_sessions s ${w.sql} GROUP BY s.status ORDER BY s.status`,
        w.params,
      );
      return rows.map((r) => ({ status: String(r.status), sessions: n(r.sessions) }));
    },

    /** daily_messages by day, tool, host and sender (the export's rows). */
    async senderDays(scope: ReadScope, f: UsageFilter, limit: number): Promise<SenderDayRow[]> {
      const w = scoped(scope, 'm.tenant_id', 'm', f);
      if (!w) return [];
      const rows = await db.query<Record<string, unknown>>(
        `SELECT m.date, m.tool_name, m.host_name, COALESCE(m.sender_name, '') AS sender_name, m.tenant_id,
                SUM(m.tokens_used) AS tokens, SUM(m.input_tokens) AS input_tokens,
                SUM(m.output_tokens) AS output_tokens, COUNT(*) AS messages, ${REQUESTS} AS requests
         FROM daily_messages m ${w.sql}
         GROUP BY m.date, m.tool_name, m.host_name, COALESCE(m.sender_name, ''), m.tenant_id
         ORDER BY m.date, m.tool_name, m.host_name, sender_name, m.tenant_id
         LIMIT ?`,
        [...w.params, limit],
      );
      return rows.map((r) => ({
        date: String(r.date),
        toolName: String(r.tool_name),
        hostName: String(r.host_name),
        senderName: String(r.sender_name),
        tenantId: n(r.tenant_id),
        tokens: n(r.tokens),
        inputTokens: n(r.input_tokens),
        outputTokens: n(r.output_tokens),
        messages: n(r.messages),
        requests: n(r.requests),
      }));
    },
  };
}
