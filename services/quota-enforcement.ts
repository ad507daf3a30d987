// Quota enforcement (spec document 2, rule 6; issue 10 item 7): when multi-tenant mode is on
// (settings `quota.multi_tenant`, env SVC_QUOTA__MULTI_TENANT), a Temporal Schedule starts
// quotaEnforcementWorkflow every `quota.enforcement_interval_seconds` (default 60, the spec's value).
// The schedule lives in Temporal, so it survives worker restarts and is visible and pausable in the
// Temporal UI; every worker start ensures it (creates it, or corrects only its interval) with the
// mechanism of services/maintenance-schedules.ts, and removes it when the switch is off.
//
// One tick (`enforceOnce`), idempotent:
//   1. reads every user's and tenant's use against their limits from the one accounting
//      (services/quota.ts statusOfAll, global scope);
//   2. raises quota alerts (services/quota-alerts.ts): each threshold once per period;
//   3. stops the live remote sessions of every user over quota, and of every tenant over quota, through
//      their session workflows (services/remote-session-teardown.ts, reason `quota_exceeded`; one audit
//      record per stopped session);
//   4. terminates their live workspace sessions (POST /api/sessions; status `terminated`);
//   5. pauses their running autonomous workflows by quota (the `app_quota_exceeded` transition, as a
//      refused model call does; auto-resumed when quota returns, workflows/autonomous/quota-resume.ts).
// Every kind of session a user holds is ended (spec rule 6). A second tick with the same figures raises
// no alert and finds no live session to stop.

import type { ConnectionOptions } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/client.ts';
import { slotsRepository } from '../db/repositories/autonomous/slots.ts';
import { workspaceSessionsRepository } from '../db/repositories/workspace/sessions.ts';
import { isOverQuota } from '../domain/quota-alerts.ts';
import type { QuotaEnforcementSummary } from '../domain/quota-enforcement-summary.ts';
import { toggleIntervalSchedule } from './maintenance-schedules.ts';
import { quotaServiceFor } from './quota.ts';
import { quotaAlertsService } from './quota-alerts.ts';
import {
  remoteSessionTeardown,
  type SessionStopper,
  type StoppedSession,
  type TeardownAuditEntry,
} from './remote-session-teardown.ts';
import type { KeySettings } from './secrets.ts';

export const quotaEnforcementScheduleId = (taskQueue: string) => `svc-quota-enforcement-${taskQueue}`;

/** The workflow side of step 5: signals one autonomous workflow to pause by quota. */
export interface AutonomousPauser {
  pauseForQuota(workflowId: string): Promise<unknown>;
}

export function quotaEnforcement(deps: {
  database: DatabaseHandle;
  settings: KeySettings;
  now: () => Date;
  logger: Pick<Logger, 'warn'>;
  stopper: SessionStopper;
  pauser: AutonomousPauser;
  audit: (entry: TeardownAuditEntry) => Promise<void>;
}) {
  const quota = quotaServiceFor({ database: deps.database, now: deps.now });
  const alerts = quotaAlertsService(deps);
  const teardown = remoteSessionTeardown(deps);
  const workspace = workspaceSessionsRepository(deps.database);
  const slots = slotsRepository(deps.database);

  return {
    async enforceOnce(): Promise<QuotaEnforcementSummary> {
      const status = await quota.statusOfAll({ kind: 'all' });
      const raised = await alerts.raiseFor(status);
      const users = status.users.filter(isOverQuota).map((u) => u.userId);
      const tenants = status.tenants.filter(isOverQuota).map((t) => t.tenantId);
      const stopped: StoppedSession[] = [];
      for (const userId of users)
        stopped.push(...(await teardown.stopMatching({ userId }, 'quota_exceeded')));
      for (const tenantId of tenants)
        stopped.push(...(await teardown.stopMatching({ tenantId }, 'quota_exceeded')));
      const terminated: string[] = [];
      for (const owner of [
        ...users.map((userId) => ({ userId })),
        ...tenants.map((tenantId) => ({ tenantId })),
      ])
        terminated.push(...(await workspace.terminateLive(owner, deps.now())));
      const paused: string[] = [];
      for (const workflowId of await slots.runningOf(users, tenants)) {
        try {
          await deps.pauser.pauseForQuota(workflowId);
          paused.push(workflowId);
        } catch (err) {
          // The workflow is gone or Temporal unreachable: the next tick tries again.
          deps.logger.warn(
            { err, workflow_id: workflowId },
            'could not pause an autonomous workflow by quota',
          );
        }
      }
      return {
        day: status.day,
        alertsRaised: raised.length,
        usersOverQuota: users,
        tenantsOverQuota: tenants,
        sessionsStopped: stopped.map((s) => s.sessionId),
        workspaceSessionsTerminated: terminated,
        autonomousPaused: paused,
      };
    },
  };
}

/**
 * Called by every worker at start: with multi-tenant mode on, creates the schedule (or corrects its
 * interval); with it off, removes a schedule left from an earlier start.
 */
export async function ensureQuotaEnforcementSchedule(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  multiTenant: boolean;
  intervalSeconds: number;
  /** TLS / mTLS / API key of the cluster (config/temporal-connection.ts); unset: plain `address`. */
  connection?: ConnectionOptions;
}): Promise<'ensured' | 'removed' | 'absent'> {
  return toggleIntervalSchedule({
    ...opts,
    scheduleId: quotaEnforcementScheduleId(opts.taskQueue),
    on: opts.multiTenant,
    workflowType: 'quotaEnforcementWorkflow',
  });
}
