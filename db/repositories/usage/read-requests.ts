// The SQL of request counting (spec document 2 rule 3: one request is one assistant message in
// daily_messages), for the usage and request-statistics read APIs: counts per tool, per day, per
// user, inside the caller's tenant scope (daily_messages.tenant_id). The literal `role = 'assistant'`
// lets both databases use the partial indexes of revision 0014_usage_read_indexes.
//
// This is the one place "requests" are counted (domain/usage/counting.ts): every endpoint reads its
// request figures here (the counts below, or REQUESTS_OF inside a grouped read of daily_messages);
// none sums a stored request_count (a usage report's is never a request).
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import { REQUEST_ROLE } from '../../../domain/usage/counting.ts';
import type { RawSql } from '../../client.ts';
import { num, scopedWhere, type Where } from './read-where.ts';

/** The requests of a group of daily_messages rows (`alias`): its assistant messages (rule 3). */
export const REQUESTS_OF = (alias: string): string =>
  `SUM(CASE WHEN ${alias}.role = '${REQUEST_ROLE}' THEN 1 ELSE 0 END)`;

/** The requests of one day of a tool on a host. */
export interface RequestCell {
  date: string;
  toolName: string;
  hostName: string;
  requests: number;
}

export interface RequestFilter {
  start?: string;
  end?: string;
  host?: string;
  tool?: string;
  /** Messages of this user (daily_messages.user_id). */
  userId?: number;
  /** Messages of an unknown sender of this name (no user attached). */
  unknownSender?: string;
}

function requestWhere(scope: ReadScope, f: RequestFilter): Where | null {
  const w = scopedWhere(scope, 'dm.tenant_id');
  if (!w) return null;
  w.and(`dm.role = '${REQUEST_ROLE}'`);
  if (f.start !== undefined) w.and('dm.date >= ?', f.start);
  if (f.end !== undefined) w.and('dm.date <= ?', f.end);
  w.eq('dm.host_name', f.host).eq('dm.tool_name', f.tool).eq('dm.user_id', f.userId);
  if (f.unknownSender !== undefined) w.and('dm.user_id IS NULL').and('dm.sender_name = ?', f.unknownSender);
  return w;
}

export function requestReadRepository(db: RawSql) {
  return {
    /**
     * Requests per tool name. Grouped by tenant first, the order of the partial index
     * daily_messages_requests_tenant, so the count streams through the index without a sort even
     * for a system administrator (all tenants); the tenants' counts are added up here.
     */
    async byTool(scope: ReadScope, f: RequestFilter): Promise<Map<string, number>> {
      const w = requestWhere(scope, f);
      const out = new Map<string, number>();
      if (!w) return out;
      const rows = await db.query<{ tool_name: string; n: unknown }>(
        `SELECT dm.tenant_id, dm.tool_name, COUNT(*) AS n FROM daily_messages dm ${w.sql}
         GROUP BY dm.tenant_id, dm.tool_name`,
        w.params,
      );
      for (const r of rows) out.set(r.tool_name, (out.get(r.tool_name) ?? 0) + num(r.n));
      return out;
    },

    /** Requests per day, tool and host (cells without requests are absent). */
    async byDayToolHost(scope: ReadScope, f: RequestFilter): Promise<RequestCell[]> {
      const w = requestWhere(scope, f);
      if (!w) return [];
      const rows = await db.query<{ date: string; tool_name: string; host_name: string; n: unknown }>(
        `SELECT dm.date, dm.tool_name, dm.host_name, COUNT(*) AS n FROM daily_messages dm ${w.sql}
         GROUP BY dm.date, dm.tool_name, dm.host_name`,
        w.params,
      );
      return rows.map((r) => ({
        date: String(r.date),
        toolName: r.tool_name,
        hostName: r.host_name,
        requests: num(r.n),
      }));
    },

    /** Requests per day (days without requests are absent). */
    async byDay(scope: ReadScope, f: RequestFilter): Promise<Map<string, number>> {
      const w = requestWhere(scope, f);
      const out = new Map<string, number>();
      if (!w) return out;
      const rows = await db.query<{ date: string; n: unknown }>(
        `SELECT dm.date, COUNT(*) AS n FROM daily_messages dm ${w.sql} GROUP BY dm.date`,
        w.params,
      );
      for (const r of rows) out.set(r.date, num(r.n));
      return out;
    },

    /**
     * Requests per day and per tool name of one date range, from one pass over the partial index
     * daily_messages_requests_date (date first: only the range's entries, in index order, no sort).
     * Pages that need both (GET /api/range, /api/tool/:tool_name/:days) read the entries once
     * instead of twice; the figures are byDay's and byTool's exactly (absent when zero).
     */
    async byDayAndTool(
      scope: ReadScope,
      f: RequestFilter & { start: string; end: string },
    ): Promise<{ byDay: Map<string, number>; byTool: Map<string, number> }> {
      const w = requestWhere(scope, f);
      const byDay = new Map<string, number>();
      const byTool = new Map<string, number>();
      if (!w) return { byDay, byTool };
      const rows = await db.query<{ date: string; tool_name: string; n: unknown }>(
        `SELECT dm.date, dm.tenant_id, dm.tool_name, COUNT(*) AS n FROM daily_messages dm ${w.sql}
         GROUP BY dm.date, dm.tenant_id, dm.tool_name`,
        w.params,
      );
      for (const r of rows) {
        const n = num(r.n);
        byDay.set(r.date, (byDay.get(r.date) ?? 0) + n);
        byTool.set(r.tool_name, (byTool.get(r.tool_name) ?? 0) + n);
      }
      return { byDay, byTool };
    },

    /**
     * Requests per user: known users by id (with their username), unknown senders by sender name
     * (user_id null). Most requests first.
     */
    async byUser(
      scope: ReadScope,
      f: RequestFilter,
    ): Promise<Array<{ userId: number | null; userName: string | null; requests: number; tokens: number }>> {
      const w = requestWhere(scope, f);
      if (!w) return [];
      const rows = await db.query<{
        user_id: unknown;
        user_name: string | null;
        n: unknown;
        tokens: unknown;
      }>(
        `SELECT g.user_id, COALESCE(u.username, g.sender_name) AS user_name, g.n, g.tokens
         FROM (SELECT dm.user_id, CASE WHEN dm.user_id IS NULL THEN dm.sender_name END AS sender_name,
                      COUNT(*) AS n, COALESCE(SUM(dm.tokens_used), 0) AS tokens
               FROM daily_messages dm ${w.sql}
               GROUP BY dm.user_id, CASE WHEN dm.user_id IS NULL THEN dm.sender_name END) g
         LEFT JOIN users u ON u.id = g.user_id
         ORDER BY g.n DESC, user_name`,
        w.params,
      );
      return rows.map((r) => ({
        userId: r.user_id == null ? null : num(r.user_id),
        userName: r.user_name,
        requests: num(r.n),
        tokens: num(r.tokens),
      }));
    },

    /** The live user of this name inside the scope (null: unknown or outside the scope). */
    async userInScope(scope: ReadScope, userName: string): Promise<number | null> {
      const w = scopedWhere(scope, 'tenant_id');
      if (!w) return null;
      w.and('username = ?', userName).and('deleted_at IS NULL');
      const [row] = await db.query<{ id: unknown }>(`SELECT id FROM users ${w.sql}`, w.params);
      return row ? num(row.id) : null;
    },
  };
}
