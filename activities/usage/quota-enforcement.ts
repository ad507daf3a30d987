// The side effects of one quota enforcement tick (workflows/usage/quota-enforcement.ts): the whole tick
// is services/quota-enforcement.ts enforceOnce, idempotent, so a retried activity changes nothing new.
// Sessions are stopped through their own workflows with the worker's Temporal client (the activity
// context's), with the same updates the API's stop uses; a session whose workflow cannot be reached is
// ended in the database by the teardown service. Each stop is audited as a system action. Running
// autonomous workflows of those users are paused by quota through their own signal.
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { auditRepository } from '../../db/repositories/audit.ts';
import type { QuotaEnforcementSummary } from '../../domain/quota-enforcement-summary.ts';
import { type AutonomousPauser, quotaEnforcement } from '../../services/quota-enforcement.ts';
import type { SessionStopper } from '../../services/remote-session-teardown.ts';
import { quotaExceededSignal, temporalWorkflowId } from '../../workflows/autonomous/contract.ts';
import {
  remoteSessionWorkflowId,
  sessionBoundUpdate,
  stopSessionUpdate,
} from '../../workflows/remote/contract.ts';
import type { ActivityDeps } from '../deps.ts';

/** The actor named in the audit records of stops made by the schedule. */
export const QUOTA_ENFORCEMENT_ACTOR = 'system:quota-enforcement';

/** Stop through the session workflow: wait out a start in progress, then the stop update. */
const workflowStopper = (): SessionStopper => ({
  async stopNow(sessionId) {
    const handle = Context.current().client.workflow.getHandle(remoteSessionWorkflowId(sessionId));
    await handle.executeUpdate(sessionBoundUpdate);
    return handle.executeUpdate(stopSessionUpdate);
  },
});

/** Pause by quota through the autonomous workflow's own signal (it applies the transition itself). */
const workflowPauser = (): AutonomousPauser => ({
  pauseForQuota: (workflowId) =>
    Context.current().client.workflow.getHandle(temporalWorkflowId(workflowId)).signal(quotaExceededSignal),
});

/** The activity's logger, in the shape the teardown service logs with (pino's object-first call). */
const activityLogger = (): Pick<Logger, 'warn'> => ({
  warn: ((obj: unknown, msg?: string) =>
    Context.current().log.warn(msg ?? 'warning', {
      detail: String((obj as { err?: unknown })?.err ?? ''),
    })) as Logger['warn'],
});

export function createQuotaEnforcementActivities(deps: ActivityDeps) {
  const audit = auditRepository(deps.database);
  return {
    async enforceQuotas(): Promise<QuotaEnforcementSummary> {
      const enforcement = quotaEnforcement({
        ...deps,
        logger: activityLogger(),
        stopper: workflowStopper(),
        pauser: workflowPauser(),
        audit: (e) =>
          audit.insert({
            userId: null,
            tenantId: e.targetTenantId,
            username: QUOTA_ENFORCEMENT_ACTOR,
            action: e.action,
            severity: 'warning',
            resourceType: e.resourceType,
            resourceId: e.resourceId,
            details: JSON.stringify(e.details),
            ipAddress: null,
            success: true,
            requestId: null,
            targetTenantId: e.targetTenantId,
            timestamp: deps.now(),
          }),
      });
      return enforcement.enforceOnce();
    },
  };
}

export type QuotaEnforcementActivities = ReturnType<typeof createQuotaEnforcementActivities>;
