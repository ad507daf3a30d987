// Auto-resume of autonomous workflows paused by an application quota refusal (spec document 2,
// "States and transitions": paused by quota or a failed quota check, "auto-resumed by the scheduler
// when quota is restored"; a manual pause is never auto-resumed).
//
// `signalQuotaRestored` runs once per quota tick: the activity autonomousQuotaRestored
// (activities/autonomous/scheduling.ts) lists the `paused (quota)` workflows whose owner may spend
// again, and each listed `autonomous-<id>` gets quotaRestoredSignal; the workflow applies the
// `quota_restored` transition itself, so a signal that arrives late (the workflow was paused again,
// stopped or resumed by hand meanwhile) is refused by its own state. A failed signal (the workflow is
// gone) or a failed listing (quota check unavailable: fail-closed, nobody resumed) only skips this
// tick.
//
// Which tick runs it: with multi-tenant mode on, the quota enforcement schedule's workflow
// (workflows/usage/quota-enforcement.ts) calls it after its own activity. With multi-tenant mode off
// that schedule does not exist, yet the model proxy still refuses calls over a user's or tenant's quota
// and so still pauses workflows; there the worker keeps the schedule of autonomousQuotaResumeWorkflow
// below at the same interval (services/autonomous/quota-resume-schedule.ts). Exactly one of the two
// runs at a time. Histories carry workflow ids only.
import { getExternalWorkflowHandle, proxyActivities } from '@temporalio/workflow';
import type { AutonomousSchedulingActivities } from '../../activities/autonomous/scheduling.ts';
import { quotaRestoredSignal, temporalWorkflowId } from './contract.ts';

const { autonomousQuotaRestored } = proxyActivities<AutonomousSchedulingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

export interface QuotaResumeSummary {
  /** Workflow ids (autonomous_workflows.workflow_id) listed as restored. */
  listed: string[];
  /** Those whose Temporal workflow received the signal. */
  signalled: string[];
}

export async function signalQuotaRestored(): Promise<QuotaResumeSummary> {
  let listed: string[];
  try {
    listed = await autonomousQuotaRestored();
  } catch {
    return { listed: [], signalled: [] };
  }
  const results = await Promise.allSettled(
    listed.map((id) => getExternalWorkflowHandle(temporalWorkflowId(id)).signal(quotaRestoredSignal)),
  );
  return { listed, signalled: listed.filter((_, i) => results[i]!.status === 'fulfilled') };
}

/** The stand-alone tick while multi-tenant mode is off (its schedule: quota-resume-schedule.ts). */
export async function autonomousQuotaResumeWorkflow(): Promise<QuotaResumeSummary> {
  return signalQuotaRestored();
}
