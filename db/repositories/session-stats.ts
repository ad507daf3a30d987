// The only SQL for the `session_stats` view: a materialized view on PostgreSQL (refreshed on a
// schedule, see workflows/maintenance.ts) and a plain, always-current view on SQLite.
import type { DatabaseHandle } from '../client.ts';

export function sessionStatsRepository({ sql, dialect }: DatabaseHandle) {
  return {
    /**
     * Recomputes the PostgreSQL materialized view without blocking readers (CONCURRENTLY needs the
     * unique index `session_stats_session`, created with the view). Returns false where there is
     * nothing to refresh (SQLite's plain view).
     */
    async refresh(): Promise<boolean> {
      if (dialect !== 'postgres') return false;
      await sql.exec('REFRESH MATERIALIZED VIEW CONCURRENTLY session_stats');
      return true;
    },
  };
}
