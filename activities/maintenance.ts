// Periodic upkeep run by Temporal schedules (workflows/maintenance.ts).
import { sessionStatsRepository } from '../db/repositories/session-stats.ts';
import type { ActivityDeps } from './index.ts';

export function createMaintenanceActivities(deps: Pick<ActivityDeps, 'database'>) {
  return {
    /** `refreshed` on PostgreSQL; `current` on SQLite, whose view is computed at read time. */
    async refreshSessionStats(): Promise<'refreshed' | 'current'> {
      return (await sessionStatsRepository(deps.database).refresh()) ? 'refreshed' : 'current';
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
