// Creates (or brings up to date) the Temporal schedules of periodic upkeep. Called by every worker at
// start: the first creates them, later ones find them and only correct the interval and task queue,
// so N workers never create N schedules. One schedule id per task queue keeps separate deployments
// (and test apps) sharing a namespace apart.
import {
  Client,
  Connection,
  type ConnectionOptions,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
} from '@temporalio/client';

export const sessionStatsScheduleId = (taskQueue: string) => `svc-refresh-session-stats-${taskQueue}`;
/** Daily retention cleanup (workflows/maintenance.ts retentionCleanupWorkflow, issue 11 item 4). */
export const retentionScheduleId = (taskQueue: string) => `svc-retention-cleanup-${taskQueue}`;

export async function ensureMaintenanceSchedules(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  sessionStatsEveryMinutes: number;
  /** TLS / mTLS / API key of the cluster (config/temporal-connection.ts); unset: plain `address`. */
  connection?: ConnectionOptions;
}): Promise<void> {
  const connection = await Connection.connect(opts.connection ?? { address: opts.address });
  try {
    const client = new Client({ connection, namespace: opts.namespace });
    const scheduleId = sessionStatsScheduleId(opts.taskQueue);
    await upsertIntervalSchedule(client, {
      scheduleId,
      every: `${opts.sessionStatsEveryMinutes}m`,
      workflowType: 'refreshSessionStatsWorkflow',
      taskQueue: opts.taskQueue,
    });
    await upsertIntervalSchedule(client, {
      scheduleId: retentionScheduleId(opts.taskQueue),
      every: '24h',
      workflowType: 'retentionCleanupWorkflow',
      taskQueue: opts.taskQueue,
    });
  } finally {
    await connection.close();
  }
}

/**
 * The mechanism every periodic schedule shares: create it (overlap SKIP: a run still going is not
 * stacked), or, when it exists, correct only its interval and action (its paused state and notes,
 * set in the Temporal UI, are kept).
 */
export async function upsertIntervalSchedule(
  client: Client,
  s: {
    scheduleId: string;
    every: string;
    workflowType: string;
    taskQueue: string;
    /** The workflow's arguments: ids and settings only, never secrets (they end up in the history). */
    args?: unknown[];
  },
): Promise<void> {
  const spec = { intervals: [{ every: s.every }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: s.workflowType,
    taskQueue: s.taskQueue,
    workflowId: `${s.scheduleId}-run`,
    ...(s.args ? { args: s.args } : {}),
  };
  try {
    await client.schedule.create({
      scheduleId: s.scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(s.scheduleId).update((prev) => ({ ...prev, spec, action }));
  }
}

/**
 * A schedule that exists only while `on` (a mode switch): created or corrected when on, removed when
 * off. Called by every worker at start.
 */
export async function toggleIntervalSchedule(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  scheduleId: string;
  on: boolean;
  intervalSeconds: number;
  workflowType: string;
  /** TLS / mTLS / API key of the cluster (config/temporal-connection.ts); unset: plain `address`. */
  connection?: ConnectionOptions;
}): Promise<'ensured' | 'removed' | 'absent'> {
  const connection = await Connection.connect(opts.connection ?? { address: opts.address });
  try {
    const client = new Client({ connection, namespace: opts.namespace });
    if (opts.on) {
      await upsertIntervalSchedule(client, {
        scheduleId: opts.scheduleId,
        every: `${opts.intervalSeconds}s`,
        workflowType: opts.workflowType,
        taskQueue: opts.taskQueue,
      });
      return 'ensured';
    }
    try {
      await client.schedule.getHandle(opts.scheduleId).delete();
      return 'removed';
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return 'absent';
      throw err;
    }
  } finally {
    await connection.close();
  }
}
