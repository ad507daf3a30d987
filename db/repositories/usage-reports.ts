// The only SQL for `usage_reports`: agent-reported usage, de-duplicated by report id.
import type { DatabaseHandle } from '../client.ts';

export function usageReportsRepository({ db, t }: DatabaseHandle) {
  return {
    /** Inserts the report unless its report_id is already stored; true when it was new. */
    async insertOnce(values: typeof t.usageReports.$inferInsert): Promise<boolean> {
      const rows = await db
        .insert(t.usageReports)
        .values(values)
        .onConflictDoNothing({ target: t.usageReports.reportId })
        .returning({ id: t.usageReports.id });
      return rows.length > 0;
    },
  };
}
