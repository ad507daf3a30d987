// The quota enforcement tick, started by its Temporal Schedule every `quota.enforcement_interval_seconds`
// while multi-tenant mode is on (services/quota-enforcement.ts ensures the schedule; overlap SKIP, so a
// slow tick is never stacked). One activity does the enforcement; it is idempotent, so Temporal's retry
// of a failed attempt is safe. After it, the tick signals the autonomous workflows paused by quota whose
// owner's quota is restored (workflows/autonomous/quota-resume.ts; behind a patch marker, so a tick
// already in flight when the worker is upgraded replays as it ran). The history carries ids and counts
// only.
import { patched, proxyActivities } from '@temporalio/workflow';
import type { QuotaEnforcementActivities } from '../../activities/usage/quota-enforcement.ts';
import type { QuotaEnforcementSummary } from '../../domain/quota-enforcement-summary.ts';
import { type QuotaResumeSummary, signalQuotaRestored } from '../autonomous/quota-resume.ts';

const { enforceQuotas } = proxyActivities<QuotaEnforcementActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 3 },
});

export async function quotaEnforcementWorkflow(): Promise<
  QuotaEnforcementSummary & { autonomousQuotaRestored?: QuotaResumeSummary }
> {
  const summary = await enforceQuotas();
  if (!patched('autonomous-quota-restored')) return summary;
  return { ...summary, autonomousQuotaRestored: await signalQuotaRestored() };
}
