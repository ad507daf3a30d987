// The SQL of the token figures of the usage read APIs (spec document 2, "Usage"): daily_usage, the
// tenant-scoped table every source writes (uploaded messages, usage reports, the model proxy), summed
// by tool or by day, plus the tool and host lists. Request counts come from daily_messages
// (read-requests.ts, rule 3). Raw SQL with `?` placeholders, the same text on SQLite and PostgreSQL.
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { TokenFigures } from '../../../domain/usage/read-figures.ts';
import type { RawSql } from '../../client.ts';
import { num, scopedWhere, type Where } from './read-where.ts';

export interface UsageFilter {
  start?: string;
  end?: string;
  host?: string;
  tool?: string;
}

const SUMS = `COALESCE(SUM(tokens_used), 0) AS tokens, COALESCE(SUM(input_tokens), 0) AS input_tokens,
  COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(cache_tokens), 0) AS cache_tokens`;

type SumRow = { tokens: unknown; input_tokens: unknown; output_tokens: unknown; cache_tokens: unknown };
const figures = (r: SumRow): TokenFigures => ({
  tokens: num(r.tokens),
  inputTokens: num(r.input_tokens),
  outputTokens: num(r.output_tokens),
  cacheTokens: num(r.cache_tokens),
});

/** The daily_usage rows of the scope and filter; null when the scope sees nothing. */
function usageWhere(scope: ReadScope, f: UsageFilter): Where | null {
  const w = scopedWhere(scope, 'tenant_id');
  if (!w) return null;
  if (f.start !== undefined) w.and('date >= ?', f.start);
  if (f.end !== undefined) w.and('date <= ?', f.end);
  return w.eq('host_name', f.host).eq('tool_name', f.tool);
}

export function usageReadRepository(db: RawSql) {
  return {
    /** Token sums per tool, by tool name. */
    async tokensByTool(
      scope: ReadScope,
      f: UsageFilter,
    ): Promise<Array<TokenFigures & { toolName: string }>> {
      const w = usageWhere(scope, f);
      if (!w) return [];
      const rows = await db.query<SumRow & { tool_name: string }>(
        `SELECT tool_name, ${SUMS} FROM daily_usage ${w.sql} GROUP BY tool_name ORDER BY tool_name`,
        w.params,
      );
      return rows.map((r) => ({ toolName: r.tool_name, ...figures(r) }));
    },

    /** Token sums per day (days without usage are absent). */
    async tokensByDay(scope: ReadScope, f: UsageFilter): Promise<Map<string, TokenFigures>> {
      const w = usageWhere(scope, f);
      const out = new Map<string, TokenFigures>();
      if (!w) return out;
      const rows = await db.query<SumRow & { date: string }>(
        `SELECT date, ${SUMS} FROM daily_usage ${w.sql} GROUP BY date ORDER BY date`,
        w.params,
      );
      for (const r of rows) out.set(r.date, figures(r));
      return out;
    },

    /** Distinct tool or host names with usage in the scope, sorted. */
    async names(scope: ReadScope, column: 'tool_name' | 'host_name'): Promise<string[]> {
      const w = usageWhere(scope, {});
      if (!w) return [];
      const rows = await db.query<{ name: string }>(
        `SELECT DISTINCT ${column} AS name FROM daily_usage ${w.sql} ORDER BY ${column}`,
        w.params,
      );
      return rows.map((r) => r.name);
    },
  };
}
