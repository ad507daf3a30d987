// The SQL of robot webhook delivery (spec document 2, "Organization sync and alert webhooks" item 5):
// the webhook columns of `notification_preferences` (webhook_url without any secret, the per-user
// secret only as Fernet ciphertext) and who receives an alert's push. The other preference columns
// are written by the preferences endpoint (alerts.ts `notificationPreferencesRepository`); an upsert
// here never changes them.

import { SEVERITIES, type Severity } from '../../domain/alert-visibility.ts';
import type { RawSql } from '../client.ts';
import { type AlertRow, alertRowOf } from './alerts.ts';

export interface StoredWebhook {
  webhookUrl: string | null;
  secretCiphertext: string | null;
}

/** Roles that see every tenant-wide alert (domain/access.ts isSystemAdmin). */
const SYSTEM_ADMIN_ROLES = ['platform_admin', 'admin'];

export const alertWebhooksRepository = (sql: RawSql) => ({
  async get(userId: number): Promise<StoredWebhook> {
    const rows = await sql.query<{ webhook_url: string | null; webhook_secret_encrypted: string | null }>(
      'SELECT webhook_url, webhook_secret_encrypted FROM notification_preferences WHERE user_id = ?',
      [userId],
    );
    const r = rows[0];
    return { webhookUrl: r?.webhook_url ?? null, secretCiphertext: r?.webhook_secret_encrypted ?? null };
  },

  /** Sets (or clears, with nulls) the user's webhook; other preference columns keep their values. */
  async put(userId: number, w: StoredWebhook, at: Date): Promise<void> {
    await sql.query(
      `INSERT INTO notification_preferences (user_id, webhook_url, webhook_secret_encrypted, updated_at)
       VALUES (?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET webhook_url = excluded.webhook_url,
         webhook_secret_encrypted = excluded.webhook_secret_encrypted, updated_at = excluded.updated_at`,
      [userId, w.webhookUrl, w.secretCiphertext, at],
    );
  },

  /** One alert row by id (the delivery activity reads it at send time). */
  async alert(id: number): Promise<AlertRow | undefined> {
    const rows = await sql.query(
      'SELECT id, alert_id, alert_type, severity, title, message, user_id, tenant_id, read, created_at FROM alerts WHERE id = ?',
      [id],
    );
    return rows[0] ? alertRowOf(rows[0]) : undefined;
  },

  /**
   * Active users who get this alert's push: the alert's user, or for a tenant-wide alert (no user)
   * the tenant's admins and the system admins; each with a webhook URL, push enabled, and a
   * min_severity at or below the alert's severity.
   */
  async recipients(alert: {
    user_id: number | null;
    tenant_id: number | null;
    severity: string;
  }): Promise<number[]> {
    const level = SEVERITIES.indexOf(alert.severity as Severity);
    const accepted = SEVERITIES.filter((_, i) => i <= level);
    if (accepted.length === 0) return [];
    const who =
      alert.user_id != null
        ? { sql: 'u.id = ?', params: [alert.user_id] as unknown[] }
        : {
            sql: `(u.role IN (${SYSTEM_ADMIN_ROLES.map(() => '?').join(', ')}) OR (u.role = ? AND u.tenant_id = ?))`,
            params: [...SYSTEM_ADMIN_ROLES, 'tenant_admin', alert.tenant_id ?? -1] as unknown[],
          };
    const rows = await sql.query<{ id: unknown }>(
      `SELECT u.id FROM users u JOIN notification_preferences p ON p.user_id = u.id
       WHERE ${who.sql} AND u.is_active = ? AND u.deleted_at IS NULL
         AND p.webhook_url IS NOT NULL AND p.push_enabled = ?
         AND p.min_severity IN (${accepted.map(() => '?').join(', ')})
       ORDER BY u.id`,
      [...who.params, true, true, ...accepted],
    );
    return rows.map((r) => Number(r.id));
  },
});
