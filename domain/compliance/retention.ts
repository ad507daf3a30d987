// Retention rules, pure (issue 11 item 4; spec document 2, tenant_settings: audit_log_retention_days
// default 90, data_retention_days default 365): the accepted ranges and the cutoffs a cleanup applies.
// Audit rows strictly older than `now - audit days` go; usage rows of days strictly before
// `today - data days` go (the day exactly `data days` ago is kept).
export const RETENTION_LIMITS = {
  audit_log_retention_days: { min: 7, max: 3650, default: 90 },
  data_retention_days: { min: 30, max: 3650, default: 365 },
} as const;

/** Platform-wide purge horizon for consumed tokens, old remote command/output rows and autonomous activity events. */
export const PURGE_AFTER_DAYS = 30;

const DAY_MS = 86_400_000;

export function retentionCutoffs(
  now: Date,
  rules: { auditLogRetentionDays: number; dataRetentionDays: number },
): { auditBefore: Date; dataBefore: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return {
    auditBefore: new Date(now.getTime() - rules.auditLogRetentionDays * DAY_MS),
    dataBefore: new Date(today - rules.dataRetentionDays * DAY_MS).toISOString().slice(0, 10),
  };
}

export const purgeBefore = (now: Date): Date => new Date(now.getTime() - PURGE_AFTER_DAYS * DAY_MS);
