// Alert producers for security events and anomaly detection (issue 11 item 2). Each raises through
// `raiseAlert` with a stable alert id derived from what happened, so a retry, a second instance or a
// concurrent request raises the same event at most once. All are tenant-wide alerts (user_id null):
// the administrators of the tenant concerned see them, system administrators see all (a tenant of
// null: only system administrators). A failed raise is logged, never fails the caller's request.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import { raiseAlert } from './raise.ts';

/** alert_id is at most 64 characters: a prefix and a digest of the event's identity. */
export const stableAlertId = (kind: string, ...parts: (string | number | null)[]) =>
  `${kind}:${createHash('sha256')
    .update(parts.map((p) => String(p ?? '')).join('\u0000'))
    .digest('hex')
    .slice(0, 40)}`;

type Deps = { database: DatabaseHandle; logger?: Logger };

async function safely(deps: Deps, what: string, run: () => Promise<unknown>) {
  try {
    await run();
  } catch (err) {
    deps.logger?.error({ err }, `raising the ${what} alert failed`);
  }
}

/** A username was locked after too many failed logins (once per lock). */
export function raiseLockoutAlert(
  deps: Deps,
  e: { username: string; userId: number | null; tenantId: number | null; lockedUntil: Date; at: Date },
) {
  return safely(deps, 'lockout', () =>
    raiseAlert(deps.database, {
      alertId: stableAlertId('lockout', e.username, e.lockedUntil.toISOString()),
      alertType: 'security',
      severity: 'warning',
      title: `Account locked after repeated failed logins: ${e.username}`,
      message: `Logins for "${e.username}" are locked until ${e.lockedUntil.toISOString()}.`,
      userId: null,
      tenantId: e.tenantId,
      at: e.at,
    }),
  );
}

/** A refusal repeated past the audit flood bound (domain/audit-policy.ts rule 3): once per key and window. */
export function raiseRepeatedRefusalAlert(
  deps: Deps,
  e: { action: string; source: string; ipAddress: string | null; tenantId: number | null; windowStart: Date },
) {
  return safely(deps, 'repeated refusal', () =>
    raiseAlert(deps.database, {
      alertId: stableAlertId('refusals', e.action, e.source, e.ipAddress, e.windowStart.toISOString()),
      alertType: 'security',
      severity: 'warning',
      title: `Repeated refusals: ${e.action}`,
      message: `${e.action} was refused repeatedly${e.ipAddress ? ` from ${e.ipAddress}` : ''} since ${e.windowStart.toISOString()}.`,
      userId: null,
      tenantId: e.tenantId,
      at: e.windowStart,
    }),
  );
}

/** A new anomaly_status row was recorded (once per row). */
export function raiseAnomalyAlert(
  deps: Deps,
  e: {
    recordId: number;
    anomalyType: string;
    date: string;
    tenantId: number | null;
    users: number;
    at: Date;
  },
) {
  return safely(deps, 'anomaly', () =>
    raiseAlert(deps.database, {
      alertId: `anomaly:${e.recordId}`,
      alertType: 'anomaly',
      severity: 'warning',
      title: `Usage anomaly detected: ${e.anomalyType}`,
      message: `${e.anomalyType} on ${e.date} affecting ${e.users} user(s).`,
      userId: null,
      tenantId: e.tenantId,
      at: e.at,
    }),
  );
}
