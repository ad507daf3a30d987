// The stored autonomous activity stream (autonomous_activity_events). `seq` is gap-free per workflow:
// each batch takes max(seq) + 1.. inside one transaction, and a unique-index conflict with a concurrent
// writer (another worker publishing for the same workflow) rolls the batch back and retries it with a
// fresh maximum, so rows become visible in seq order and a reader following `seq > cursor` misses none
// (the same scheme as remote_runtime_outputs' event_index).
import { and, asc, eq, gt, lte, max } from 'drizzle-orm';
import type { DatabaseHandle } from '../../client.ts';
import { isUniqueViolation } from '../../unique-violation.ts';

export interface StoredActivityRow {
  seq: number;
  payload: string;
}

const MAX_ATTEMPTS = 20;

export function activityEventsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const a = t.autonomousActivityEvents;
  const w = t.autonomousWorkflows;
  return {
    /**
     * Appends the payloads in order; returns their seqs ([] when the workflow is gone). Rows at or below
     * `last seq - keep` of the workflow are deleted in the same transaction (the bound per workflow).
     */
    async append(workflowId: string, payloads: string[], createdAt: Date, keep: number): Promise<number[]> {
      if (!payloads.length) return [];
      for (let attempt = 1; ; attempt++) {
        try {
          return await database.transaction(async ({ db: tx }) => {
            const [wf] = await tx
              .select({ tenantId: w.tenantId })
              .from(w)
              .where(eq(w.workflowId, workflowId));
            if (!wf) return [];
            const [top] = await tx
              .select({ n: max(a.seq) })
              .from(a)
              .where(eq(a.workflowId, workflowId));
            const first = (top?.n ?? 0) + 1;
            const last = first + payloads.length - 1;
            await tx.insert(a).values(
              payloads.map((payload, i) => ({
                workflowId,
                seq: first + i,
                tenantId: wf.tenantId,
                payload,
                createdAt,
              })),
            );
            // Only when the batch crosses a multiple of 100: the bound costs one DELETE per 100 events.
            if (Math.floor(last / 100) !== Math.floor((first - 1) / 100) && last > keep)
              await tx.delete(a).where(and(eq(a.workflowId, workflowId), lte(a.seq, last - keep)));
            return payloads.map((_, i) => first + i);
          });
        } catch (err) {
          if (!isUniqueViolation(err) || attempt >= MAX_ATTEMPTS) throw err;
        }
      }
    },
    /** Events with seq > afterSeq, in order. */
    async listAfter(workflowId: string, afterSeq: number, limit: number): Promise<StoredActivityRow[]> {
      return db
        .select({ seq: a.seq, payload: a.payload })
        .from(a)
        .where(and(eq(a.workflowId, workflowId), gt(a.seq, afterSeq)))
        .orderBy(asc(a.seq))
        .limit(limit);
    },
    /** The workflow's highest stored seq (0 when none). */
    async lastSeq(workflowId: string): Promise<number> {
      const [top] = await db
        .select({ n: max(a.seq) })
        .from(a)
        .where(eq(a.workflowId, workflowId));
      return top?.n ?? 0;
    },
  };
}
