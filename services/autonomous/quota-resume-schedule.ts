// The schedule that auto-resumes quota-paused autonomous workflows while multi-tenant mode is off
// (workflows/autonomous/quota-resume.ts explains the choice). The model proxy refuses calls over a
// user's or tenant's quota in either mode, so an autonomous workflow can be paused by quota in either
// mode; the quota enforcement schedule (services/quota-enforcement.ts), which does the auto-resume in
// multi-tenant mode, exists only in that mode. So every worker start ensures exactly one of them:
//   multi-tenant on  -> this schedule is removed (the enforcement tick signals the workflows);
//   multi-tenant off -> this schedule starts autonomousQuotaResumeWorkflow every
//                       `quota.enforcement_interval_seconds` (default 60, the spec's scheduler period).
// Same mechanism as the other periodic schedules (upsertIntervalSchedule: overlap SKIP, the interval
// corrected on a later start, a pause set in the Temporal UI kept).
import type { ConnectionOptions } from '@temporalio/client';
import { toggleIntervalSchedule } from '../maintenance-schedules.ts';

export const autonomousQuotaResumeScheduleId = (taskQueue: string) =>
  `svc-autonomous-quota-resume-${taskQueue}`;

export async function ensureAutonomousQuotaResumeSchedule(opts: {
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
    scheduleId: autonomousQuotaResumeScheduleId(opts.taskQueue),
    on: !opts.multiTenant,
    workflowType: 'autonomousQuotaResumeWorkflow',
  });
}
