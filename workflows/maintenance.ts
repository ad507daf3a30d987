// Maintenance workflows, each started by a Temporal schedule (services/maintenance-schedules.ts):
// short, idempotent, and skipped rather than stacked when a run is still going.
import { proxyActivities } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance.ts';

const { refreshSessionStats, runRetentionCleanup } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 3 },
});

/** Refreshes the PostgreSQL `session_stats` materialized view (a no-op on SQLite). */
export async function refreshSessionStatsWorkflow(): Promise<string> {
  return refreshSessionStats();
}

/**
 * Daily retention (issue 11 item 4): every tenant's retention rules applied to its audit and usage
 * rows, plus the platform-wide purge of expired sessions and proxy tokens, consumed registration tokens
 * and old remote command/output rows. Returns the number of rows deleted.
 */
export async function retentionCleanupWorkflow(): Promise<number> {
  return runRetentionCleanup();
}
