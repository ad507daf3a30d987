// The quota enforcement tick, started by its Temporal Schedule every `quota.enforcement_interval_seconds`
// while multi-tenant mode is on (services/quota-enforcement.ts ensures the schedule; overlap SKIP, so a
// slow tick is never stacked). One activity does the whole tick; it is idempotent, so Temporal's retry
// of a failed attempt is safe. The history carries ids and counts only.
import { proxyActivities } from '@temporalio/workflow';
import type { QuotaEnforcementActivities } from '../../activities/usage/quota-enforcement.ts';
import type { QuotaEnforcementSummary } from '../../services/quota-enforcement.ts';

const { enforceQuotas } = proxyActivities<QuotaEnforcementActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 3 },
});

export async function quotaEnforcementWorkflow(): Promise<QuotaEnforcementSummary> {
  return enforceQuotas();
}
