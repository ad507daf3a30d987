// The background fetch scheduler (spec document 2, "Upload, fetch and reports"; "Organization sync and
// alert webhooks" item 3 names it): with `collectors.schedule_enabled`, a Temporal Schedule per task
// queue starts a collection run every `collectors.schedule_interval_minutes`; disabled, the schedule is
// deleted. Ensured by every worker at start (bin/runtime.ts runWorker), like the maintenance and org
// sync schedules: create, or when it exists correct only its interval and action (a pause set in the
// Temporal UI is kept).
//
// The action is scheduledCollectWorkflow (workflows/usage/collect-schedule.ts), which starts the same
// collection workflow, under the same fixed id, as POST /api/fetch/data, so the run is recorded and
// shown in GET /api/fetch/status like a manual one (trigger 'schedule', requested_by null). Overlap
// SKIP: a tick still running is not doubled; a run already going (manual) makes the tick skip.
import { Client, Connection, type ConnectionOptions, ScheduleNotFoundError } from '@temporalio/client';
import type { Settings } from '../../config/settings.ts';
import { upsertIntervalSchedule } from '../maintenance-schedules.ts';
import { collectRunInput } from './run-input.ts';

export const collectScheduleId = (taskQueue: string) => `svc-usage-collect-${taskQueue}`;

export type CollectScheduleState = 'ensured' | 'removed' | 'absent';

export async function upsertCollectSchedule(
  client: Client,
  s: { everyMinutes: number; taskQueue: string },
): Promise<void> {
  await upsertIntervalSchedule(client, {
    scheduleId: collectScheduleId(s.taskQueue),
    every: `${s.everyMinutes}m`,
    workflowType: 'scheduledCollectWorkflow',
    taskQueue: s.taskQueue,
    args: [collectRunInput('schedule', null)],
  });
}

/** Brings the collection schedule in line with the settings. */
export async function ensureCollectSchedule(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  collectors: Pick<Settings['collectors'], 'schedule_enabled' | 'schedule_interval_minutes'>;
  /** TLS / mTLS / API key of the cluster (config/temporal-connection.ts); unset: plain `address`. */
  connection?: ConnectionOptions;
}): Promise<CollectScheduleState> {
  const connection = await Connection.connect(opts.connection ?? { address: opts.address });
  try {
    const client = new Client({ connection, namespace: opts.namespace });
    if (opts.collectors.schedule_enabled) {
      await upsertCollectSchedule(client, {
        everyMinutes: opts.collectors.schedule_interval_minutes,
        taskQueue: opts.taskQueue,
      });
      return 'ensured';
    }
    try {
      await client.schedule.getHandle(collectScheduleId(opts.taskQueue)).delete();
      return 'removed';
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) return 'absent';
      throw err;
    }
  } finally {
    await connection.close();
  }
}
