// Audit analysis for the compliance endpoints (issue 11 item 4): loads the audit rows of a read scope
// over a window (audit_logs' own repository, so the scope rule is the audit log's: rows of the
// caller's tenant and rows that targeted it) and hands them to the pure rules of domain/compliance.
import type { DatabaseHandle } from '../../db/client.ts';
import { auditRepository } from '../../db/repositories/audit.ts';
import { complianceSignalsRepository } from '../../db/repositories/compliance/signals.ts';
import {
  type AuditEvent,
  activityProfile,
  auditAnomalies,
  auditPatterns,
} from '../../domain/compliance/audit-patterns.ts';
import {
  SECURITY_WEIGHTS,
  SECURITY_WINDOW_DAYS,
  STALE_KEY_DAYS,
  securityScore,
} from '../../domain/compliance/security-score.ts';
import type { ReadScope } from '../../domain/tenant-scope.ts';

/** Upper bound of rows one analysis reads (the response says when it was reached). */
export const MAX_ANALYSED_EVENTS = 100_000;
const DAY_MS = 86_400_000;

export function auditAnalysis(deps: { database: DatabaseHandle; now: () => Date }) {
  const audit = auditRepository(deps.database);
  const signals = complianceSignalsRepository(deps.database);

  async function events(
    scope: ReadScope,
    range: { from: Date; before: Date },
    userId?: number,
  ): Promise<{ events: AuditEvent[]; truncated: boolean }> {
    const rows = await audit.list(scope, { ...range, userId }, { limit: MAX_ANALYSED_EVENTS, offset: 0 });
    return {
      events: rows.map((r) => ({
        timestamp: r.timestamp,
        userId: r.userId,
        username: r.username,
        action: r.action,
        success: r.success,
        severity: r.severity,
      })),
      truncated: rows.length === MAX_ANALYSED_EVENTS,
    };
  }

  const window = (days: number) => {
    const before = deps.now();
    return { from: new Date(before.getTime() - days * DAY_MS), before };
  };
  const period = (r: { from: Date; before: Date }, days: number) => ({
    days,
    start: r.from.toISOString(),
    end: r.before.toISOString(),
  });

  return {
    events,
    async patterns(scope: ReadScope, days: number) {
      const r = window(days);
      const e = await events(scope, r);
      return { ...period(r, days), truncated: e.truncated, ...auditPatterns(e.events) };
    },
    async anomalies(scope: ReadScope, days: number, threshold: number) {
      const r = window(days);
      const e = await events(scope, r);
      return { ...period(r, days), truncated: e.truncated, ...auditAnomalies(e.events, threshold) };
    },
    async profile(scope: ReadScope, userId: number, days: number) {
      const r = window(days);
      const e = await events(scope, r, userId);
      return { ...period(r, days), truncated: e.truncated, ...activityProfile(e.events) };
    },
    async securityScore(scope: ReadScope) {
      const now = deps.now();
      const s = await signals.securitySignals(
        scope,
        new Date(now.getTime() - SECURITY_WINDOW_DAYS * DAY_MS),
        new Date(now.getTime() - STALE_KEY_DAYS * DAY_MS),
      );
      const { score, components } = securityScore(s);
      return {
        score,
        window_days: SECURITY_WINDOW_DAYS,
        stale_key_days: STALE_KEY_DAYS,
        weights: SECURITY_WEIGHTS,
        formula: 'score = round(100 * (1 - sum(weight * penalty))), each penalty in [0, 1]',
        components,
        signals: {
          active_users: s.activeUsers,
          administrators: s.administrators,
          sso_users: s.ssoUsers,
          lockouts: s.lockouts,
          active_keys: s.activeKeys,
          stale_keys: s.staleKeys,
          proxy_refusals: s.proxyRefusals,
          proxy_tokens_issued: s.proxyTokensIssued,
        },
        generated_at: now.toISOString(),
      };
    },
  };
}
