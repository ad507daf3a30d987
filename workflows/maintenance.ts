// Maintenance workflows, each started by a Temporal schedule (services/maintenance-schedules.ts):
// short, idempotent, and skipped rather than stacked when a run is still going.
import { proxyActivities } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance.ts';

const { refreshSessionStats } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 3 },
});

/** Refreshes the PostgreSQL `session_stats` materialized view (a no-op on SQLite). */
export async function refreshSessionStatsWorkflow(): Promise<string> {
  return refreshSessionStats();
}
