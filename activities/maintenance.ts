// Periodic upkeep run by Temporal schedules (workflows/maintenance.ts).
import { auditRepository } from '../db/repositories/audit.ts';
import { sessionStatsRepository } from '../db/repositories/session-stats.ts';
import { retentionService } from '../services/compliance/retention.ts';
import type { ActivityDeps } from './deps.ts';

export function createMaintenanceActivities(deps: Pick<ActivityDeps, 'database' | 'now'>) {
  return {
    /** `refreshed` on PostgreSQL; `current` on SQLite, whose view is computed at read time. */
    async refreshSessionStats(): Promise<'refreshed' | 'current'> {
      return (await sessionStatsRepository(deps.database).refresh()) ? 'refreshed' : 'current';
    },

    /** The daily retention run (services/compliance/retention.ts), recorded in the audit log. */
    async runRetentionCleanup(): Promise<number> {
      const result = await retentionService(deps).cleanup({ dryRun: false, purge: true });
      const purged = Object.values(result.purged ?? {}).reduce((a, b) => a + b, 0);
      await auditRepository(deps.database).insert({
        userId: null,
        tenantId: null,
        username: 'system',
        action: 'COMPLIANCE_RETENTION_CLEANUP',
        severity: 'info',
        resourceType: 'retention',
        resourceId: null,
        details: JSON.stringify({
          scheduled: true,
          tenants: result.tenants.length,
          tables: result.tables,
          purged: result.purged,
          total: result.total + purged,
        }),
        ipAddress: null,
        success: true,
        requestId: null,
        targetTenantId: null,
        timestamp: deps.now(),
      });
      return result.total + purged;
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
