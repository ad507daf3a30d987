// Scheduling activities of autonomous workflows (spec document 2, "Limits", "States and transitions").
//
// claimAutonomousSlot: the workflow asks to leave `pending` with the state `transition(state,
// {type: 'start'})` gave it; the claim (db/repositories/autonomous/slots.ts) writes it only while the
// global limit (`agent_max_concurrent_workflows`, read on every call, after the data directory's
// config file was looked at again: config/live-settings.ts, so a changed file applies at the next
// cycle) and the owner's per-user limit (tenant `max_sessions_per_user`)
// have room. `full` tells the workflow to wait (a wake signal or its next poll) and ask again.
//
// autonomousQuotaRestored: the ids of workflows paused by an application quota refusal (`paused_by
// quota`) whose owner may spend again now, judged by the model proxy's own check (services/quota.ts
// checkQuota with one request: the user's and the tenant's daily and monthly limits). Fail-closed: if
// the check fails for anyone, no workflow is listed this tick. A manual (or any other) pause is never
// listed. The quota schedule signals each listed workflow (workflows/autonomous/quota-resume.ts).
// Inputs and results carry ids and statuses only.
import { Context } from '@temporalio/activity';
import { refreshLiveSettings } from '../../config/live-settings.ts';
import { type SlotClaim, slotsRepository } from '../../db/repositories/autonomous/slots.ts';
import { autonomousLimits } from '../../domain/autonomous/limits.ts';
import { isRunning } from '../../domain/autonomous/states.ts';
import type { WorkflowState } from '../../domain/autonomous/transitions.ts';
import { activityBusFor, statusEvent } from '../../services/autonomous/activity-bus.ts';
import { QuotaCheckError, type QuotaSubject, quotaServiceFor } from '../../services/quota.ts';
import type { ActivityDeps } from '../deps.ts';

export type { SlotClaim };

/** At most this many ids per tick (one signal each in the tick's history); the rest come next tick. */
export const QUOTA_RESTORED_MAX_IDS = 500;

/** A warning in the activity's log when running as an activity (tests may call these directly). */
function warn(message: string, detail: Record<string, unknown>): void {
  try {
    Context.current().log.warn(message, detail);
  } catch {
    // Not inside an activity.
  }
}

export function createAutonomousSchedulingActivities(deps: ActivityDeps) {
  const slots = slotsRepository(deps.database);
  const quota = quotaServiceFor({ database: deps.database, now: deps.now });

  return {
    async claimAutonomousSlot(input: { workflowId: string; next: WorkflowState }): Promise<SlotClaim> {
      if (!isRunning(input.next.status))
        throw new Error(`a slot claim must start a running status, not ${input.next.status}`);
      refreshLiveSettings(deps.settings, (message) => warn(message, { workflowId: input.workflowId }));
      const { maxConcurrentWorkflows } = autonomousLimits(deps.settings);
      const claim = await slots.claim(input.workflowId, input.next, maxConcurrentWorkflows, deps.now());
      if (claim.outcome === 'started')
        activityBusFor(deps.database).publish(
          statusEvent(input.workflowId, 'pending', input.next, deps.now()),
        );
      return claim;
    },

    async autonomousQuotaRestored(): Promise<string[]> {
      const paused = await slots.pausedForQuota();
      if (paused.length === 0) return [];
      const bySubject = new Map<string, { subject: QuotaSubject; ids: string[] }>();
      for (const p of paused) {
        const key = `${p.userId}:${p.tenantId ?? ''}`;
        const entry = bySubject.get(key) ?? {
          subject: { userId: p.userId, tenantId: p.tenantId },
          ids: [],
        };
        entry.ids.push(p.workflowId);
        bySubject.set(key, entry);
      }
      const restored: string[] = [];
      for (const { subject, ids } of bySubject.values()) {
        try {
          const status = await quota.checkQuota(subject);
          if (status.allowed) restored.push(...ids);
        } catch (err) {
          if (!(err instanceof QuotaCheckError)) throw err;
          warn('autonomous quota auto-resume: quota check failed; no workflow resumed this tick', {
            userId: subject.userId,
            error: err.message,
          });
          return [];
        }
      }
      return restored.slice(0, QUOTA_RESTORED_MAX_IDS);
    },
  };
}

export type AutonomousSchedulingActivities = ReturnType<typeof createAutonomousSchedulingActivities>;
