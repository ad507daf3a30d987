// The SQL of the user-facing alert list (`alerts`, spec document 2 "Governance, alerts, quotas"):
// every alert of every kind (quota, content filter, security, anomaly) is written by `insertAlert`,
// so the alert stream and webhooks see them all in one table, in id order.
import type { RawSql } from '../client.ts';

export type AlertSeverity = 'info' | 'warning' | 'critical';

export interface AlertInsert {
  /** Unique; a second insert with the same id is a no-op (raise-once callers pass a stable id). */
  alertId: string;
  alertType: string;
  severity: AlertSeverity;
  title: string;
  message: string | null;
  /** The user the alert is about and for; null for tenant-wide alerts (seen by its admins). */
  userId: number | null;
  tenantId: number | null;
  at: Date;
}

/** Inserts the alert unless its alert_id is stored; returns the row id, or undefined when it was. */
export async function insertAlert(sql: RawSql, a: AlertInsert): Promise<number | undefined> {
  const rows = await sql.query<{ id: number }>(
    `INSERT INTO alerts (alert_id, alert_type, severity, title, message, user_id, tenant_id, read, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (alert_id) DO NOTHING RETURNING id`,
    [a.alertId, a.alertType, a.severity, a.title, a.message, a.userId, a.tenantId, false, a.at],
  );
  return rows[0] === undefined ? undefined : Number(rows[0].id);
}
