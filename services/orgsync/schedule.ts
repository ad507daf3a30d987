// The Temporal Schedule of each chat platform's org sync (spec document 2, "Organization sync and
// alert webhooks" item 3): with `<platform>.org_sync_enabled` and the platform configured (app_key and
// app_secret), every `org_sync_interval_minutes` an orgSyncWorkflow({platform, tenantId:
// org_sync_tenant_id}) run; otherwise the schedule is deleted. Ensured by every worker at start
// (bin/runtime.ts runWorker), like the maintenance schedules: created or updated by
// upsertIntervalSchedule (services/maintenance-schedules.ts), with the workflow's arguments (ids only).
// One schedule id per platform and task queue. Overlap SKIP: a run still going is not stacked.
import { Client, Connection, type ConnectionOptions, ScheduleNotFoundError } from '@temporalio/client';
import type { Settings } from '../../config/settings.ts';
import { PLATFORMS, type Platform } from '../../domain/orgsync/platform.ts';
import { upsertIntervalSchedule } from '../maintenance-schedules.ts';
import { platformCredentials } from './directories.ts';

export const orgSyncScheduleId = (platform: Platform, taskQueue: string) =>
  `svc-orgsync-${platform}-${taskQueue}`;

export type OrgSyncScheduleState = 'ensured' | 'removed' | 'absent';

export async function upsertOrgSyncSchedule(
  client: Client,
  s: { platform: Platform; tenantId: number; everyMinutes: number; taskQueue: string },
): Promise<void> {
  await upsertIntervalSchedule(client, {
    scheduleId: orgSyncScheduleId(s.platform, s.taskQueue),
    every: `${s.everyMinutes}m`,
    workflowType: 'orgSyncWorkflow',
    taskQueue: s.taskQueue,
    args: [{ platform: s.platform, tenantId: s.tenantId }],
  });
}

/** Brings both platforms' schedules in line with the settings. */
export async function ensureOrgSyncSchedules(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  settings: Pick<Settings, Platform>;
  /** TLS / mTLS / API key of the cluster (config/temporal-connection.ts); unset: plain `address`. */
  connection?: ConnectionOptions;
}): Promise<Record<Platform, OrgSyncScheduleState>> {
  const connection = await Connection.connect(opts.connection ?? { address: opts.address });
  try {
    const client = new Client({ connection, namespace: opts.namespace });
    const out = {} as Record<Platform, OrgSyncScheduleState>;
    for (const platform of PLATFORMS) {
      const s = opts.settings[platform];
      if (s.org_sync_enabled && platformCredentials(opts.settings, platform)) {
        await upsertOrgSyncSchedule(client, {
          platform,
          tenantId: s.org_sync_tenant_id,
          everyMinutes: s.org_sync_interval_minutes,
          taskQueue: opts.taskQueue,
        });
        out[platform] = 'ensured';
        continue;
      }
      try {
        await client.schedule.getHandle(orgSyncScheduleId(platform, opts.taskQueue)).delete();
        out[platform] = 'removed';
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
        out[platform] = 'absent';
      }
    }
    return out;
  } finally {
    await connection.close();
  }
}
