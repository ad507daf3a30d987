// The only SQL for `org_sync_items`: the platform snapshot of a running sync, one row per department
// and per user (JSON payload), keyed by the run id. Fetch activities write pages here (a page fetched
// again after a retry overwrites nothing: ON CONFLICT DO NOTHING), apply activities read it back in
// chunks ordered by external id, and the last activity deletes the run's rows.
import { and, asc, count, eq, gt } from 'drizzle-orm';
import type { PlatformDepartment, PlatformUser } from '../../../domain/orgsync/platform.ts';
import type { DatabaseHandle } from '../../client.ts';

type Kind = 'department' | 'user';

export function orgSyncSnapshotRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const s = t.orgSyncItems;
  const put = async (runId: string, kind: Kind, items: { id: string }[]) => {
    if (items.length === 0) return;
    await db
      .insert(s)
      .values(items.map((i) => ({ runId, kind, externalId: i.id, payload: JSON.stringify(i) })))
      .onConflictDoNothing();
  };
  const read = async <T>(runId: string, kind: Kind, after: string | null, limit: number): Promise<T[]> => {
    const rows = await db
      .select({ payload: s.payload })
      .from(s)
      .where(and(eq(s.runId, runId), eq(s.kind, kind), after === null ? undefined : gt(s.externalId, after)))
      .orderBy(asc(s.externalId))
      .limit(limit);
    return rows.map((r) => JSON.parse(r.payload) as T);
  };
  return {
    putDepartments: (runId: string, items: PlatformDepartment[]) => put(runId, 'department', items),
    putUsers: (runId: string, items: PlatformUser[]) => put(runId, 'user', items),
    departments: (runId: string) => read<PlatformDepartment>(runId, 'department', null, 1_000_000),
    /** Up to `limit` users with an external id after `after` (null: from the first). */
    users: (runId: string, after: string | null, limit: number) =>
      read<PlatformUser>(runId, 'user', after, limit),
    async userIds(runId: string): Promise<string[]> {
      const rows = await db
        .select({ id: s.externalId })
        .from(s)
        .where(and(eq(s.runId, runId), eq(s.kind, 'user')));
      return rows.map((r) => r.id);
    },
    async count(runId: string, kind: Kind): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(s)
        .where(and(eq(s.runId, runId), eq(s.kind, kind)));
      return Number(row?.n ?? 0);
    },
    async clear(runId: string): Promise<void> {
      await db.delete(s).where(eq(s.runId, runId));
    },
  };
}
