// The only SQL of quota alerts: `quota_alerts` (one row per subject, quota, threshold and period,
// kept once by its UNIQUE dedupe_key) and the matching row in `alerts` (the user-facing alert list),
// written only when the quota_alerts row was new. Tenant-scoped listing and acknowledgement.
// Raw SQL with `?` placeholders, the same text on SQLite and PostgreSQL.

import type { DatabaseHandle, RawSql } from '../client.ts';
import { type AlertSeverity, insertAlert } from './alerts.ts';

export interface QuotaAlertInsert {
  userId: number | null;
  tenantId: number | null;
  /** `user_quota` or `tenant_quota`. */
  alertType: string;
  quotaType: string;
  threshold: number;
  currentUsage: number;
  quotaLimit: number;
  percentage: number;
  period: string;
  periodKey: string;
  dedupeKey: string;
  /** The `alerts` row raised with it. */
  alert: { alertId: string; severity: AlertSeverity; title: string; message: string };
  at: Date;
}

export interface QuotaAlertRow {
  id: number;
  userId: number | null;
  tenantId: number | null;
  alertType: string | null;
  quotaType: string | null;
  threshold: number | null;
  currentUsage: number;
  quotaLimit: number;
  percentage: number | null;
  period: string | null;
  periodKey: string | null;
  dedupeKey: string | null;
  acknowledged: boolean;
  acknowledgedBy: number | null;
  acknowledgedAt: Date | null;
  createdAt: Date;
}

export interface QuotaAlertFilters {
  acknowledged?: boolean;
}

const COLUMNS = `id, user_id, tenant_id, alert_type, quota_type, threshold, current_usage, quota_limit, percentage,
  period, period_key, dedupe_key, acknowledged, acknowledged_by, acknowledged_at, created_at`;

const date = (v: unknown): Date | null => (v == null ? null : new Date(v as string | number | Date));
const numOrNull = (v: unknown): number | null => (v == null ? null : Number(v));
const truthy = (v: unknown) => v === true || v === 1 || v === '1' || v === 't';

function rowOf(r: Record<string, unknown>): QuotaAlertRow {
  return {
    id: Number(r.id),
    userId: numOrNull(r.user_id),
    tenantId: numOrNull(r.tenant_id),
    alertType: (r.alert_type as string | null) ?? null,
    quotaType: (r.quota_type as string | null) ?? null,
    threshold: numOrNull(r.threshold),
    currentUsage: Number(r.current_usage ?? 0),
    quotaLimit: Number(r.quota_limit ?? 0),
    percentage: numOrNull(r.percentage),
    period: (r.period as string | null) ?? null,
    periodKey: (r.period_key as string | null) ?? null,
    dedupeKey: (r.dedupe_key as string | null) ?? null,
    acknowledged: truthy(r.acknowledged),
    acknowledgedBy: numOrNull(r.acknowledged_by),
    acknowledgedAt: date(r.acknowledged_at),
    createdAt: date(r.created_at) ?? new Date(0),
  };
}

/** `tenantCondition` comes from db/tenant-scope-sql.ts rawScopeCondition over `tenant_id`. */
type Condition = { sql: string; params: unknown[] } | undefined;

function where(tenantCondition: Condition, f: QuotaAlertFilters): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (tenantCondition) {
    parts.push(tenantCondition.sql);
    params.push(...tenantCondition.params);
  }
  if (f.acknowledged !== undefined) {
    parts.push('acknowledged = ?');
    params.push(f.acknowledged);
  }
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

export function quotaAlertsRepository(database: DatabaseHandle) {
  const q: RawSql = database.sql;
  return {
    /**
     * Raises the alert once: inserts the quota_alerts row unless its dedupe_key is stored, and only
     * then the alerts row, in one transaction. Returns the new quota_alerts id, or undefined when the
     * alert had been raised before.
     */
    async raiseOnce(a: QuotaAlertInsert): Promise<number | undefined> {
      return database.transaction(async ({ sql }) => {
        const rows = await sql.query<{ id: number }>(
          `INSERT INTO quota_alerts (user_id, tenant_id, alert_type, quota_type, threshold, current_usage, quota_limit,
                                     percentage, period, period_key, dedupe_key, acknowledged, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
          [
            a.userId,
            a.tenantId,
            a.alertType,
            a.quotaType,
            a.threshold,
            a.currentUsage,
            a.quotaLimit,
            a.percentage,
            a.period,
            a.periodKey,
            a.dedupeKey,
            false,
            a.at,
          ],
        );
        const id = rows[0]?.id;
        if (id === undefined) return undefined;
        await insertAlert(sql, {
          alertId: a.alert.alertId,
          alertType: 'quota',
          severity: a.alert.severity,
          title: a.alert.title,
          message: a.alert.message,
          userId: a.userId,
          tenantId: a.tenantId,
          at: a.at,
        });
        return Number(id);
      });
    },

    /** Newest first. */
    async list(
      tenantCondition: Condition,
      f: QuotaAlertFilters,
      page: { limit: number; offset: number },
    ): Promise<QuotaAlertRow[]> {
      const w = where(tenantCondition, f);
      const rows = await q.query<Record<string, unknown>>(
        `SELECT ${COLUMNS} FROM quota_alerts ${w.sql} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
        [...w.params, page.limit, page.offset],
      );
      return rows.map(rowOf);
    },

    async count(tenantCondition: Condition, f: QuotaAlertFilters): Promise<number> {
      const w = where(tenantCondition, f);
      const [row] = await q.query<{ n: unknown }>(
        `SELECT COUNT(*) AS n FROM quota_alerts ${w.sql}`,
        w.params,
      );
      return Number(row?.n ?? 0);
    },

    async findById(id: number): Promise<QuotaAlertRow | undefined> {
      const [row] = await q.query<Record<string, unknown>>(
        `SELECT ${COLUMNS} FROM quota_alerts WHERE id = ?`,
        [id],
      );
      return row ? rowOf(row) : undefined;
    },

    /** Marks the alert acknowledged unless it already is (the first acknowledgement is kept). */
    async acknowledge(id: number, userId: number, at: Date): Promise<void> {
      await q.query(
        `UPDATE quota_alerts SET acknowledged = ?, acknowledged_by = ?, acknowledged_at = ?
         WHERE id = ? AND acknowledged = ?`,
        [true, userId, at, id, false],
      );
    },
  };
}

export type QuotaAlertsRepository = ReturnType<typeof quotaAlertsRepository>;
