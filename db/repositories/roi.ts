// The SQL of the ROI and optimization endpoints (spec document 2, "Return on investment"): per-model
// message cells from daily_messages (tokens and assistant responses = requests, rule 3, by day, tool,
// model and user) and daily_usage rows (tokens of every source including proxied calls, cache tokens,
// models_used; never request_count: requests are assistant messages, rule 3) that the domain
// (domain/roi/figures.ts) prices and compares. Each read
// applies the caller's read scope through the one helper (db/tenant-scope-sql.ts) on the table's own
// tenant column; a scope that sees nothing answers empty without a query. PostgreSQL sums of bigint
// come back as numeric strings: every figure goes through Number().
import type { ModelCell, UsageRow } from '../../domain/roi/figures.ts';
import type { QuotaSubject } from '../../domain/roi/idle-quota.ts';
import type { ReadScope } from '../../domain/tenant-scope.ts';
import type { DatabaseHandle, RawSql } from '../client.ts';
import { rawScopeCondition } from '../tenant-scope-sql.ts';
import { REQUESTS_OF } from './usage/read-requests.ts';

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
        `SELECT m.date, m.tool_name, m.model, m.user_id, us.username, m.tenant_id, SUM(m.tokens_used) AS tokens,
                SUM(m.input_tokens) AS input_tokens, SUM(m.output_tokens) AS output_tokens,
                ${REQUESTS_OF('m')} AS requests
         FROM daily_messages m LEFT JOIN users us ON us.id = m.user_id ${w.sql}
         GROUP BY m.date, m.tool_name, m.model, m.user_id, us.username, m.tenant_id
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
        tenantId: r.tenant_id == null ? null : n(r.tenant_id),
      }));
    },

    /** The names of the given tenants (deleted ones included: their usage still counts). */
    async tenantNames(ids: readonly number[]): Promise<Map<number, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db.query<Record<string, unknown>>(
        `SELECT id, name FROM tenants WHERE id IN (${ids.map(() => '?').join(', ')})`,
        [...ids],
      );
      return new Map(rows.map((r) => [n(r.id), String(r.name)]));
    },

    /** daily_usage rows in scope (one per tenant, day, tool and host). */
    async usageRows(scope: ReadScope, f: RoiFilter): Promise<UsageRow[]> {
      const w = where(scope, 'u.tenant_id', 'u', f, false);
      if (!w) return [];
      const rows = await db.query<Record<string, unknown>>(
        `SELECT u.date, u.tool_name, u.tokens_used, u.input_tokens, u.output_tokens, u.cache_tokens,
                u.models_used, u.tenant_id
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
        modelsUsed: r.models_used == null ? null : String(r.models_used),
        tenantId: r.tenant_id == null ? null : n(r.tenant_id),
      }));
    },
  };
}

/** The security_settings key holding the administrator's price overrides (JSON, domain/roi/admin-prices.ts). */
export const ROI_PRICES_KEY = 'roi_model_prices';
const ROI_PRICES_DESCRIPTION =
  'ROI price overrides (USD per million tokens) set by an administrator through /api/roi/prices';

/**
 * The stored price overrides: one security_settings row (global, like the `pricing` settings section).
 * `update` reads and writes it in one transaction with the row locked (PostgreSQL FOR UPDATE; SQLite
 * serialises writers), so two concurrent changes never lose one another.
 */
export function roiPricesRepository(database: DatabaseHandle) {
  return {
    async get(): Promise<string | null> {
      const rows = await database.sql.query<{ v: string | null }>(
        'SELECT setting_value AS v FROM security_settings WHERE setting_key = ?',
        [ROI_PRICES_KEY],
      );
      return rows[0]?.v ?? null;
    },

    /** Applies `change` to the stored JSON; a result of undefined leaves the row as it was. */
    async update(
      change: (current: string | null) => string | undefined,
      at: Date,
    ): Promise<{ before: string | null; after: string } | undefined> {
      return database.transaction(async ({ sql }) => {
        await sql.query(
          `INSERT INTO security_settings (setting_key, setting_value, description, updated_at)
           VALUES (?, NULL, ?, ?) ON CONFLICT (setting_key) DO NOTHING`,
          [ROI_PRICES_KEY, ROI_PRICES_DESCRIPTION, at],
        );
        const lock = sql.dialect === 'postgres' ? ' FOR UPDATE' : '';
        const rows = await sql.query<{ v: string | null }>(
          `SELECT setting_value AS v FROM security_settings WHERE setting_key = ?${lock}`,
          [ROI_PRICES_KEY],
        );
        const before = rows[0]?.v ?? null;
        const after = change(before);
        if (after === undefined) return undefined;
        await sql.query(
          'UPDATE security_settings SET setting_value = ?, updated_at = ? WHERE setting_key = ?',
          [after, at, ROI_PRICES_KEY],
        );
        return { before, after };
      });
    },
  };
}

/**
 * Users and tenants with token quotas, and their tokens per day in [start, end] (the idle-quota
 * suggestion, domain/roi/idle-quota.ts). Users: a personal daily or monthly token quota set, not
 * deleted, in scope (and only `userId` when given); their use is their daily_messages tokens (uploads
 * and proxied calls alike). Tenants (only when `withTenants`): tenant_quotas in scope, the use is the
 * tenant's daily_usage tokens (every source). The tool filter does not apply: a quota covers all tools.
 */
export async function quotaSubjects(
  db: RawSql,
  scope: ReadScope,
  f: { start: string; end: string; userId?: number; withTenants: boolean },
): Promise<QuotaSubject[]> {
  const userScope = rawScopeCondition(scope, 'u.tenant_id');
  if (userScope === false) return [];
  const uWhere = [
    'u.deleted_at IS NULL',
    '(u.daily_token_quota IS NOT NULL OR u.monthly_token_quota IS NOT NULL)',
  ];
  const uParams: unknown[] = [];
  if (userScope) {
    uWhere.push(userScope.sql);
    uParams.push(...userScope.params);
  }
  if (f.userId !== undefined) {
    uWhere.push('u.id = ?');
    uParams.push(f.userId);
  }
  const users = await db.query<Record<string, unknown>>(
    `SELECT u.id, u.username, u.tenant_id, u.daily_token_quota, u.monthly_token_quota
     FROM users u WHERE ${uWhere.join(' AND ')} ORDER BY u.id`,
    uParams,
  );
  const out: QuotaSubject[] = [];
  if (users.length > 0) {
    const ids = users.map((u) => n(u.id));
    const byUser = new Map<number, Map<string, number>>();
    const rows = await db.query<Record<string, unknown>>(
      `SELECT m.user_id, m.date, SUM(m.tokens_used) AS tokens FROM daily_messages m
       WHERE m.date >= ? AND m.date <= ? AND m.user_id IN (${ids.map(() => '?').join(', ')})
       GROUP BY m.user_id, m.date`,
      [f.start, f.end, ...ids],
    );
    for (const r of rows) {
      const id = n(r.user_id);
      if (!byUser.has(id)) byUser.set(id, new Map());
      byUser.get(id)!.set(String(r.date), n(r.tokens));
    }
    for (const u of users)
      out.push({
        kind: 'user',
        id: n(u.id),
        name: u.username == null ? null : String(u.username),
        tenantId: u.tenant_id == null ? null : n(u.tenant_id),
        dailyTokenQuota: u.daily_token_quota == null ? null : n(u.daily_token_quota),
        monthlyTokenQuota: u.monthly_token_quota == null ? null : n(u.monthly_token_quota),
        tokensByDay: byUser.get(n(u.id)) ?? new Map(),
      });
  }
  if (!f.withTenants) return out;
  const tenantScope = rawScopeCondition(scope, 'q.tenant_id');
  if (tenantScope === false) return out;
  const tenants = await db.query<Record<string, unknown>>(
    `SELECT q.tenant_id, t.name, q.daily_token_limit, q.monthly_token_limit
     FROM tenant_quotas q JOIN tenants t ON t.id = q.tenant_id
     WHERE t.deleted_at IS NULL${tenantScope ? ` AND ${tenantScope.sql}` : ''} ORDER BY q.tenant_id`,
    tenantScope ? tenantScope.params : [],
  );
  if (tenants.length === 0) return out;
  const tids = tenants.map((t) => n(t.tenant_id));
  const use = await db.query<Record<string, unknown>>(
    `SELECT d.tenant_id, d.date, SUM(d.tokens_used) AS tokens FROM daily_usage d
     WHERE d.date >= ? AND d.date <= ? AND d.tenant_id IN (${tids.map(() => '?').join(', ')})
     GROUP BY d.tenant_id, d.date`,
    [f.start, f.end, ...tids],
  );
  const byTenant = new Map<number, Map<string, number>>();
  for (const r of use) {
    const id = n(r.tenant_id);
    if (!byTenant.has(id)) byTenant.set(id, new Map());
    byTenant.get(id)!.set(String(r.date), n(r.tokens));
  }
  for (const t of tenants)
    out.push({
      kind: 'tenant',
      id: n(t.tenant_id),
      name: t.name == null ? null : String(t.name),
      tenantId: n(t.tenant_id),
      dailyTokenQuota: t.daily_token_limit == null ? null : n(t.daily_token_limit),
      monthlyTokenQuota: t.monthly_token_limit == null ? null : n(t.monthly_token_limit),
      tokensByDay: byTenant.get(n(t.tenant_id)) ?? new Map(),
    });
  return out;
}
