// The SQL of the ROI and optimization endpoints (spec document 2, "Return on investment"): per-model
// message cells from daily_messages (tokens and assistant responses = requests, rule 3, by day, tool,
// model and user) and daily_usage rows (tokens of every source including proxied calls, cache tokens,
// request_count, models_used) that the domain (domain/roi/figures.ts) prices and compares. Each read
// applies the caller's read scope through the one helper (db/tenant-scope-sql.ts) on the table's own
// tenant column; a scope that sees nothing answers empty without a query. PostgreSQL sums of bigint
// come back as numeric strings: every figure goes through Number().
import type { ModelCell, UsageRow } from '../../domain/roi/figures.ts';
import type { ReadScope } from '../../domain/tenant-scope.ts';
import type { RawSql } from '../client.ts';
import { rawScopeCondition } from '../tenant-scope-sql.ts';

export interface RoiFilter {
  start: string;
  end: string;
  toolName?: string;
  userId?: number;
}

const n = (v: unknown): number => (v == null ? 0 : Number(v));

function where(scope: ReadScope, column: string, alias: string, f: RoiFilter, withUser: boolean) {
  const c = rawScopeCondition(scope, column);
  if (c === false) return null;
  const parts: string[] = [];
  const params: unknown[] = [];
  if (c) {
    parts.push(c.sql);
    params.push(...c.params);
  }
  parts.push(`${alias}.date >= ?`, `${alias}.date <= ?`);
  params.push(f.start, f.end);
  if (f.toolName !== undefined) {
    parts.push(`${alias}.tool_name = ?`);
    params.push(f.toolName);
  }
  if (withUser && f.userId !== undefined) {
    parts.push(`${alias}.user_id = ?`);
    params.push(f.userId);
  }
  return { sql: `WHERE ${parts.join(' AND ')}`, params };
}

export function roiRepository(db: RawSql) {
  return {
    /** daily_messages by day, tool, model and user (with the username of a live or deleted user). */
    async modelCells(scope: ReadScope, f: RoiFilter): Promise<ModelCell[]> {
      const w = where(scope, 'm.tenant_id', 'm', f, true);
      if (!w) return [];
      const rows = await db.query<Record<string, unknown>>(
        `SELECT m.date, m.tool_name, m.model, m.user_id, us.username, SUM(m.tokens_used) AS tokens,
                SUM(m.input_tokens) AS input_tokens, SUM(m.output_tokens) AS output_tokens,
                SUM(CASE WHEN m.role = 'assistant' THEN 1 ELSE 0 END) AS requests
         FROM daily_messages m LEFT JOIN users us ON us.id = m.user_id ${w.sql}
         GROUP BY m.date, m.tool_name, m.model, m.user_id, us.username
         ORDER BY m.date, m.tool_name, m.model, m.user_id`,
        w.params,
      );
      return rows.map((r) => ({
        date: String(r.date),
        toolName: String(r.tool_name),
        model: r.model == null || r.model === '' ? null : String(r.model),
        userId: r.user_id == null ? null : n(r.user_id),
        username: r.username == null ? null : String(r.username),
        tokens: n(r.tokens),
        inputTokens: n(r.input_tokens),
        outputTokens: n(r.output_tokens),
        requests: n(r.requests),
      }));
    },

    /** daily_usage rows in scope (one per tenant, day, tool and host). */
    async usageRows(scope: ReadScope, f: RoiFilter): Promise<UsageRow[]> {
      const w = where(scope, 'u.tenant_id', 'u', f, false);
      if (!w) return [];
      const rows = await db.query<Record<string, unknown>>(
        `SELECT u.date, u.tool_name, u.tokens_used, u.input_tokens, u.output_tokens, u.cache_tokens,
                u.request_count, u.models_used
         FROM daily_usage u ${w.sql}
         ORDER BY u.date, u.tool_name`,
        w.params,
      );
      return rows.map((r) => ({
        date: String(r.date),
        toolName: String(r.tool_name),
        tokens: n(r.tokens_used),
        inputTokens: n(r.input_tokens),
        outputTokens: n(r.output_tokens),
        cacheTokens: n(r.cache_tokens),
        requests: n(r.request_count),
        modelsUsed: r.models_used == null ? null : String(r.models_used),
      }));
    },
  };
}
