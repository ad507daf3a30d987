// The only SQL of retention (issue 11 item 4): a tenant's retention rules (tenant_settings), counting
// and batch-deleting its rows past their cutoff, and the platform-wide purge of expired credentials
// and old remote runtime rows. Counting and deleting share one WHERE per table (RETENTION_TABLES), so
// a dry run counts exactly the rows a real run deletes. Deletes go in batches of `batchSize` ids per
// statement (`id IN (SELECT id ... LIMIT n)`, the same text on SQLite and PostgreSQL) so no statement
// holds locks over millions of rows.
import type { DatabaseHandle } from '../../client.ts';

export const DELETE_BATCH_SIZE = 5000;

export interface RetentionRules {
  tenantId: number;
  auditLogRetentionDays: number;
  dataRetentionDays: number;
}

/** Which cutoff a table follows: `audit` (a timestamp) or `data` (a YYYY-MM-DD day). */
interface RetentionTable {
  table: string;
  kind: 'audit' | 'data';
  /** WHERE over the table (alias-free): `?` = tenant id, then the cutoff. */
  where: string;
}

const userInTenant = 'user_id IN (SELECT id FROM users WHERE tenant_id = ?)';

/** Per-tenant tables and their retention condition. `daily_stats`/`hourly_stats` carry no tenant. */
export const RETENTION_TABLES: readonly RetentionTable[] = [
  { table: 'audit_logs', kind: 'audit', where: 'tenant_id = ? AND timestamp < ?' },
  { table: 'daily_messages', kind: 'data', where: 'tenant_id = ? AND date < ?' },
  { table: 'daily_usage', kind: 'data', where: 'tenant_id = ? AND date < ?' },
  { table: 'tenant_usage', kind: 'data', where: 'tenant_id = ? AND date < ?' },
  { table: 'usage_uploads', kind: 'data', where: 'tenant_id = ? AND date < ?' },
  { table: 'user_daily_stats', kind: 'data', where: `${userInTenant} AND date < ?` },
  { table: 'quota_usage', kind: 'data', where: `${userInTenant} AND date < ?` },
];

/** Platform-wide purges (no tenant): each names its table and condition over `?` = now (or a cutoff). */
export interface PurgeCutoffs {
  now: Date;
  /** Consumed/revoked registration tokens and finished remote rows older than this are removed. */
  before: Date;
}

export function retentionRepository({ sql }: DatabaseHandle) {
  const tsParam = (d: Date) => (sql.dialect === 'sqlite' ? d.getTime() : d.toISOString());
  const num = (v: unknown) => Number(v ?? 0);

  const purges = (c: PurgeCutoffs): { table: string; where: string; params: unknown[] }[] => {
    const now = tsParam(c.now);
    const before = tsParam(c.before);
    return [
      { table: 'sessions', where: 'expires_at < ?', params: [now] },
      { table: 'web_user_auth_sessions', where: 'expires_at < ?', params: [now] },
      { table: 'proxy_tokens', where: 'expires_at < ? OR revoked_at < ?', params: [now, before] },
      {
        table: 'registration_tokens',
        where: 'consumed_at < ? OR revoked_at < ? OR expires_at < ?',
        params: [before, before, before],
      },
      { table: 'remote_runtime_commands', where: 'created_at < ?', params: [before] },
      { table: 'remote_runtime_outputs', where: 'created_at < ?', params: [before] },
      // The autonomous live stream is observability, not audit (services/autonomous/activity-bus.ts).
      { table: 'autonomous_activity_events', where: 'created_at < ?', params: [before] },
    ];
  };

  async function countWhere(table: string, where: string, params: unknown[]): Promise<number> {
    const [row] = await sql.query<{ n: unknown }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`,
      params,
    );
    return num(row?.n);
  }

  /** Deletes in batches; `proxy_tokens` is keyed by `jti`, every other table by `id`. */
  async function deleteWhere(
    table: string,
    where: string,
    params: unknown[],
    batch: number,
  ): Promise<number> {
    const key = table === 'proxy_tokens' ? 'jti' : 'id';
    let total = 0;
    for (;;) {
      const rows = await sql.query<{ k: unknown }>(
        `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE ${where} LIMIT ${batch}) RETURNING ${key} AS k`,
        params,
      );
      total += rows.length;
      if (rows.length < batch) return total;
    }
  }

  return {
    async tenantIds(): Promise<number[]> {
      const rows = await sql.query<{ id: unknown }>(
        'SELECT id FROM tenants WHERE deleted_at IS NULL ORDER BY id',
      );
      return rows.map((r) => num(r.id));
    },

    /** The tenant's rules; the spec's defaults (90 / 365) when it has no settings row yet. */
    async rules(tenantId: number): Promise<RetentionRules> {
      const [row] = await sql.query<{ a: unknown; d: unknown }>(
        'SELECT audit_log_retention_days AS a, data_retention_days AS d FROM tenant_settings WHERE tenant_id = ?',
        [tenantId],
      );
      return {
        tenantId,
        auditLogRetentionDays: row ? num(row.a) : 90,
        dataRetentionDays: row ? num(row.d) : 365,
      };
    },

    async saveRules(r: RetentionRules, now: Date): Promise<void> {
      const updated = await sql.query(
        'UPDATE tenant_settings SET audit_log_retention_days = ?, data_retention_days = ?, updated_at = ? WHERE tenant_id = ? RETURNING tenant_id',
        [r.auditLogRetentionDays, r.dataRetentionDays, tsParam(now), r.tenantId],
      );
      if (updated.length > 0) return;
      await sql.query(
        'INSERT INTO tenant_settings (tenant_id, audit_log_retention_days, data_retention_days, updated_at) VALUES (?, ?, ?, ?)',
        [r.tenantId, r.auditLogRetentionDays, r.dataRetentionDays, tsParam(now)],
      );
    },

    async tenantExists(tenantId: number): Promise<boolean> {
      return (
        (await sql.query('SELECT id FROM tenants WHERE id = ? AND deleted_at IS NULL', [tenantId])).length > 0
      );
    },

    /**
     * Per-table counts of the tenant's rows past their cutoff; deleted when `apply` is set.
     * `auditBefore` is a timestamp, `dataBefore` a YYYY-MM-DD day (rows of that day are kept).
     */
    async sweepTenant(
      tenantId: number,
      cutoffs: { auditBefore: Date; dataBefore: string },
      apply: boolean,
      batch = DELETE_BATCH_SIZE,
    ): Promise<Record<string, number>> {
      const out: Record<string, number> = {};
      for (const t of RETENTION_TABLES) {
        const params = [tenantId, t.kind === 'audit' ? tsParam(cutoffs.auditBefore) : cutoffs.dataBefore];
        out[t.table] = apply
          ? await deleteWhere(t.table, t.where, params, batch)
          : await countWhere(t.table, t.where, params);
      }
      return out;
    },

    /** Expired sessions and tokens, consumed registration tokens, old remote command/output rows. */
    async purgeExpired(
      c: PurgeCutoffs,
      apply: boolean,
      batch = DELETE_BATCH_SIZE,
    ): Promise<Record<string, number>> {
      const out: Record<string, number> = {};
      for (const p of purges(c))
        out[p.table] = apply
          ? await deleteWhere(p.table, p.where, p.params, batch)
          : await countWhere(p.table, p.where, p.params);
      return out;
    },
  };
}
