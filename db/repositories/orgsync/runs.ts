// The only SQL for `org_sync_runs`: one row per org-sync run, keyed by its Temporal workflow id. The
// API writes it when it starts a run (so GET .../sync/<run_id> answers at once); the workflow's first
// activity writes it too (scheduled runs have no API call) and its last one closes it.
import { and, desc, eq } from 'drizzle-orm';
import type { OrgSyncCounts } from '../../../domain/orgsync/reconcile.ts';
import type { DatabaseHandle } from '../../client.ts';

export type OrgSyncRunStatus = 'running' | 'succeeded' | 'failed';

export interface OrgSyncRun {
  runId: string;
  platform: string;
  tenantId: number;
  status: OrgSyncRunStatus;
  startedAt: Date;
  finishedAt: Date | null;
  counts: OrgSyncCounts | null;
  error: string | null;
}

const parseCounts = (text: string | null): OrgSyncCounts | null => {
  if (!text) return null;
  try {
    return JSON.parse(text) as OrgSyncCounts;
  } catch {
    return null;
  }
};

export function orgSyncRunsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const r = t.orgSyncRuns;
  const view = (row: typeof r.$inferSelect): OrgSyncRun => ({
    runId: row.runId,
    platform: row.platform,
    tenantId: row.tenantId,
    status: row.status as OrgSyncRunStatus,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    counts: parseCounts(row.counts),
    error: row.error,
  });
  return {
    /** Records a run as running; a row already there (the API wrote it) is left as it is. */
    async start(run: { runId: string; platform: string; tenantId: number }, at: Date): Promise<void> {
      await db
        .insert(r)
        .values({ ...run, status: 'running', startedAt: at })
        .onConflictDoNothing({ target: r.runId });
    },
    async finish(
      runId: string,
      outcome: { status: 'succeeded' | 'failed'; counts: OrgSyncCounts | null; error: string | null },
      at: Date,
    ): Promise<void> {
      await db
        .update(r)
        .set({
          status: outcome.status,
          finishedAt: at,
          counts: outcome.counts ? JSON.stringify(outcome.counts) : null,
          error: outcome.error,
        })
        .where(eq(r.runId, runId));
    },
    async find(runId: string): Promise<OrgSyncRun | undefined> {
      const [row] = await db.select().from(r).where(eq(r.runId, runId));
      return row ? view(row) : undefined;
    },
    /** The newest run of the platform for the tenant still marked running. */
    async latestRunning(platform: string, tenantId: number): Promise<OrgSyncRun | undefined> {
      const [row] = await db
        .select()
        .from(r)
        .where(and(eq(r.platform, platform), eq(r.tenantId, tenantId), eq(r.status, 'running')))
        .orderBy(desc(r.startedAt))
        .limit(1);
      return row ? view(row) : undefined;
    },
  };
}
