// Raises quota alerts from the accounting's figures (issue 10 item 6): for every user and tenant whose
// use reached 80, 90 or 100 % of a limit, the highest threshold reached is raised once per period
// (domain/quota-alerts.ts decides which; db/repositories/quota-alerts.ts keeps it once by its
// dedupe_key and writes the `alerts` row only when the quota alert was new). Running it again with the
// same figures raises nothing: that is what makes the enforcement tick idempotent.
import type { DatabaseHandle } from '../db/client.ts';
import { quotaAlertsRepository } from '../db/repositories/quota-alerts.ts';
import {
  type QuotaAlertCandidate,
  quotaAlertCandidates,
  quotaAlertText,
  type SubjectUsage,
} from '../domain/quota-alerts.ts';
import type { AllQuotaStatus } from './quota.ts';

export interface RaisedQuotaAlert {
  id: number;
  dedupeKey: string;
  severity: QuotaAlertCandidate['severity'];
}

export function quotaAlertsService(deps: { database: DatabaseHandle; now: () => Date }) {
  const repo = quotaAlertsRepository(deps.database);

  async function raise(
    c: QuotaAlertCandidate,
    who: { userId: number | null; tenantId: number | null; name: string },
  ): Promise<RaisedQuotaAlert | undefined> {
    const text = quotaAlertText(c, who.name);
    const id = await repo.raiseOnce({
      userId: who.userId,
      tenantId: who.tenantId,
      alertType: `${c.scope}_quota`,
      quotaType: c.quotaType,
      threshold: c.threshold,
      currentUsage: c.current,
      quotaLimit: c.limit,
      percentage: c.percentage,
      period: c.period,
      periodKey: c.periodKey,
      dedupeKey: c.dedupeKey,
      alert: { alertId: `quota:${c.dedupeKey}`, severity: c.severity, ...text },
      at: deps.now(),
    });
    return id === undefined ? undefined : { id, dedupeKey: c.dedupeKey, severity: c.severity };
  }

  return {
    /** Raises every alert the figures call for that was not raised before; returns the new ones. */
    async raiseFor(status: AllQuotaStatus): Promise<RaisedQuotaAlert[]> {
      const raised: RaisedQuotaAlert[] = [];
      const period = { day: status.day, month: status.month };
      for (const u of status.users) {
        const s: SubjectUsage = { scope: 'user', subjectId: u.userId, ...u, ...period };
        for (const c of quotaAlertCandidates(s)) {
          const r = await raise(c, { userId: u.userId, tenantId: u.tenantId, name: u.username });
          if (r) raised.push(r);
        }
      }
      for (const t of status.tenants) {
        const s: SubjectUsage = { scope: 'tenant', subjectId: t.tenantId, ...t, ...period };
        for (const c of quotaAlertCandidates(s)) {
          const r = await raise(c, { userId: null, tenantId: t.tenantId, name: t.name });
          if (r) raised.push(r);
        }
      }
      return raised;
    },
  };
}
