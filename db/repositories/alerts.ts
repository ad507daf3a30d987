// The SQL of the user-facing alert list (`alerts`, spec document 2 "Governance, alerts, quotas"):
// every alert of every kind (quota, content filter, security, anomaly) is written by `insertAlert`,
// so the alert stream and webhooks see them all in one table, in id order.

import {
  type AlertViewer,
  DEFAULT_MIN_SEVERITY,
  SEVERITIES,
  type Severity,
} from '../../domain/alert-visibility.ts';
import type { RawSql } from '../client.ts';
import { rawScopeCondition } from '../tenant-scope-sql.ts';
import { isoOf, num, Where } from './usage/read-where.ts';

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

/**
 * Inserts the alert unless its alert_id is stored; returns the row id, or undefined when it was.
 *
 * On PostgreSQL the insert and the NOTIFY on ALERTS_CHANNEL are one statement (one round trip), and
 * the notification carries the row itself (`<id> <json>`, see alertNotification), so no instance
 * has to SELECT a new alert to deliver it. The NOTIFY is sent at commit when inside a transaction.
 */
export async function insertAlert(sql: RawSql, a: AlertInsert): Promise<number | undefined> {
  const values = [a.alertId, a.alertType, a.severity, a.title, a.message, a.userId, a.tenantId, false, a.at];
  const insert = `INSERT INTO alerts (alert_id, alert_type, severity, title, message, user_id, tenant_id, read, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (alert_id) DO NOTHING RETURNING id`;
  const rows =
    sql.dialect === 'postgres'
      ? await sql.query<{ id: number }>(
          `WITH ins AS (${insert})
           SELECT id, pg_notify(?, CAST(id AS text) || ?) AS notified FROM ins`,
          [...values, ALERTS_CHANNEL, alertNotificationBody(a)],
        )
      : await sql.query<{ id: number }>(insert, values);
  if (rows[0] === undefined) return undefined;
  return Number(rows[0].id);
}

/** PostgreSQL NOTIFY payloads must be shorter than 8000 bytes; larger alerts send only their id. */
const MAX_NOTIFY_BODY = 7_900;

/** The part of the notification after the id: ` <json of the row without id>`, or '' when too large. */
function alertNotificationBody(a: AlertInsert): string {
  const body = ` ${JSON.stringify({
    alert_id: a.alertId,
    alert_type: a.alertType,
    severity: a.severity,
    title: a.title,
    message: a.message,
    user_id: a.userId,
    tenant_id: a.tenantId,
    created_at: a.at.toISOString(),
  })}`;
  return Buffer.byteLength(body) <= MAX_NOTIFY_BODY ? body : '';
}

/**
 * The new alert a notification names: its id, and the row when the payload carries it (null when the
 * row must be read, e.g. a large alert). Undefined for a payload that is not an alert notification.
 */
export function alertOfNotification(payload: string): { id: number; row: AlertRow | null } | undefined {
  const space = payload.indexOf(' ');
  const id = Number(space < 0 ? payload : payload.slice(0, space));
  if (!Number.isSafeInteger(id) || id <= 0) return undefined;
  if (space < 0) return { id, row: null };
  try {
    const r = JSON.parse(payload.slice(space + 1)) as Record<string, unknown>;
    if (typeof r.alert_id !== 'string' || typeof r.title !== 'string' || typeof r.created_at !== 'string')
      return { id, row: null };
    return { id, row: alertRowOf({ ...r, id, read: false }) };
  } catch {
    return { id, row: null };
  }
}

/** The row `insertAlert` just stored, as every reader sees it (the bus hands it over without a read). */
export const insertedAlertRow = (id: number, a: AlertInsert): AlertRow =>
  alertRowOf({
    id,
    alert_id: a.alertId,
    alert_type: a.alertType,
    severity: a.severity,
    title: a.title,
    message: a.message,
    user_id: a.userId,
    tenant_id: a.tenantId,
    read: false,
    created_at: a.at,
  });

/** The channel `insertAlert` NOTIFYs on PostgreSQL (payload: the new row id); the alert bus LISTENs. */
export const ALERTS_CHANNEL = 'svc_alerts';

/** One alert row as read back (timestamps as ISO strings). */
export interface AlertRow {
  id: number;
  alert_id: string;
  alert_type: string | null;
  severity: AlertSeverity;
  title: string;
  message: string | null;
  user_id: number | null;
  tenant_id: number | null;
  read: boolean;
  created_at: string;
}

const ALERT_COLUMNS =
  'id, alert_id, alert_type, severity, title, message, user_id, tenant_id, read, created_at';

/** Maps a driver row (SQLite: integer booleans and epoch ms) to an AlertRow. */
export function alertRowOf(r: Record<string, unknown>): AlertRow {
  return {
    id: Number(r.id),
    alert_id: String(r.alert_id),
    alert_type: (r.alert_type as string | null) ?? null,
    severity: r.severity as AlertSeverity,
    title: String(r.title),
    message: (r.message as string | null) ?? null,
    user_id: r.user_id == null ? null : Number(r.user_id),
    tenant_id: r.tenant_id == null ? null : Number(r.tenant_id),
    read: r.read === true || r.read === 1 || r.read === '1',
    created_at: isoOf(r.created_at) ?? new Date(0).toISOString(),
  };
}

/** The highest alert row id (0 when there is none): where a new follower starts. */
export async function maxAlertId(sql: RawSql): Promise<number> {
  const rows = await sql.query<{ m: unknown }>('SELECT MAX(id) AS m FROM alerts');
  return rows[0]?.m == null ? 0 : Number(rows[0].m);
}

/** Alerts with id > `afterId`, in id order, at most `limit`. */
export async function alertsAfter(sql: RawSql, afterId: number, limit: number): Promise<AlertRow[]> {
  const rows = await sql.query(`SELECT ${ALERT_COLUMNS} FROM alerts WHERE id > ? ORDER BY id LIMIT ?`, [
    afterId,
    limit,
  ]);
  return rows.map(alertRowOf);
}

/** The viewer's visibility as a WHERE condition on `alerts` (domain/alert-visibility.ts decides). */
function visibleWhere(viewer: AlertViewer): Where {
  const w = new Where();
  w.and(`severity IN (${viewer.severities.map(() => '?').join(', ')})`, ...viewer.severities);
  const tenantWide = rawScopeCondition(viewer.tenantWide, 'tenant_id');
  if (tenantWide === false) w.and('user_id = ?', viewer.userId);
  else if (tenantWide === undefined) w.and('(user_id = ? OR user_id IS NULL)', viewer.userId);
  else w.and(`(user_id = ? OR (user_id IS NULL AND ${tenantWide.sql}))`, viewer.userId, ...tenantWide.params);
  return w;
}

export interface AlertListFilter {
  type?: string;
  severity?: string;
  unreadOnly: boolean;
  limit: number;
  offset: number;
}

/**
 * `read` of an alert for one viewer: read state is per user (alert_reads, revision 0041), so one
 * administrator marking a tenant-wide alert read leaves it unread for the others.
 */
const READ_BY = 'EXISTS (SELECT 1 FROM alert_reads r WHERE r.alert_id = alerts.id AND r.user_id = ?)';
const VIEWER_COLUMNS = `id, alert_id, alert_type, severity, title, message, user_id, tenant_id, ${READ_BY} AS read, created_at`;

/** Listing, counting, marking and deleting the alerts a viewer may see (none of them leaks others). */
export const alertsRepository = (sql: RawSql) => ({
  async list(viewer: AlertViewer, f: AlertListFilter): Promise<{ rows: AlertRow[]; total: number }> {
    const w = visibleWhere(viewer).eq('alert_type', f.type).eq('severity', f.severity);
    if (f.unreadOnly) w.and(`NOT ${READ_BY}`, viewer.userId);
    const [rows, count] = await Promise.all([
      sql.query(`SELECT ${VIEWER_COLUMNS} FROM alerts ${w.sql} ORDER BY id DESC LIMIT ? OFFSET ?`, [
        viewer.userId,
        ...w.params,
        f.limit,
        f.offset,
      ]),
      sql.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM alerts ${w.sql}`, w.params),
    ]);
    return { rows: rows.map(alertRowOf), total: num(count[0]?.n) };
  },

  async unreadCount(viewer: AlertViewer): Promise<number> {
    const w = visibleWhere(viewer).and(`NOT ${READ_BY}`, viewer.userId);
    const rows = await sql.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM alerts ${w.sql}`, w.params);
    return num(rows[0]?.n);
  },

  /** Visible alerts with id > afterId in id order (SSE Last-Event-ID replay). */
  async visibleAfter(viewer: AlertViewer, afterId: number, limit: number): Promise<AlertRow[]> {
    const w = visibleWhere(viewer).and('id > ?', afterId);
    const rows = await sql.query(`SELECT ${VIEWER_COLUMNS} FROM alerts ${w.sql} ORDER BY id LIMIT ?`, [
      viewer.userId,
      ...w.params,
      limit,
    ]);
    return rows.map(alertRowOf);
  },

  /** Marks one visible alert read for the viewer; false when it is not visible (or does not exist). */
  async markRead(viewer: AlertViewer, alertId: string): Promise<boolean> {
    const w = visibleWhere(viewer).and('alert_id = ?', alertId);
    const [alert] = await sql.query<{ id: unknown }>(`SELECT id FROM alerts ${w.sql}`, w.params);
    if (alert === undefined) return false;
    await sql.query(
      'INSERT INTO alert_reads (alert_id, user_id) VALUES (?, ?) ON CONFLICT (alert_id, user_id) DO NOTHING',
      [Number(alert.id), viewer.userId],
    );
    return true;
  },

  /** Marks every visible alert the viewer has not read as read for the viewer; returns how many. */
  async markAllRead(viewer: AlertViewer): Promise<number> {
    const w = visibleWhere(viewer).and(`NOT ${READ_BY}`, viewer.userId);
    const rows = await sql.query(
      `INSERT INTO alert_reads (alert_id, user_id) SELECT id, ? FROM alerts ${w.sql}
       ON CONFLICT (alert_id, user_id) DO NOTHING RETURNING alert_id`,
      [viewer.userId, ...w.params],
    );
    return rows.length;
  },

  /** Deletes one visible alert (its read marks go with it); false when it is not visible. */
  async remove(viewer: AlertViewer, alertId: string): Promise<boolean> {
    const w = visibleWhere(viewer).and('alert_id = ?', alertId);
    const rows = await sql.query(`DELETE FROM alerts ${w.sql} RETURNING id`, w.params);
    return rows.length > 0;
  },
});

export interface NotificationPreferences {
  email_enabled: boolean;
  push_enabled: boolean;
  min_severity: Severity;
}

const bool = (v: unknown) => v === true || v === 1 || v === '1';

/** notification_preferences (spec defaults when the user has no row: true, true, warning). */
export const notificationPreferencesRepository = (sql: RawSql) => ({
  async get(userId: number): Promise<NotificationPreferences> {
    const rows = await sql.query<Record<string, unknown>>(
      'SELECT email_enabled, push_enabled, min_severity FROM notification_preferences WHERE user_id = ?',
      [userId],
    );
    const r = rows[0];
    if (!r) return { email_enabled: true, push_enabled: true, min_severity: DEFAULT_MIN_SEVERITY };
    const min = r.min_severity as Severity;
    return {
      email_enabled: bool(r.email_enabled),
      push_enabled: bool(r.push_enabled),
      min_severity: SEVERITIES.includes(min) ? min : DEFAULT_MIN_SEVERITY,
    };
  },

  async put(userId: number, p: NotificationPreferences, at: Date): Promise<void> {
    await sql.query(
      `INSERT INTO notification_preferences (user_id, email_enabled, push_enabled, min_severity, updated_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET email_enabled = excluded.email_enabled,
         push_enabled = excluded.push_enabled, min_severity = excluded.min_severity,
         updated_at = excluded.updated_at`,
      [userId, p.email_enabled, p.push_enabled, p.min_severity, at],
    );
  },
});
