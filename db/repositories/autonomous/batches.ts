// The only SQL of autonomous_batches (migration 0023_autonomous_engine) and of the batch-wide moves on
// its workflows. A batch runs its items one at a time, in batch_position order, on independent
// worktrees pinned to one shared origin/main baseline (spec document 2, "Autonomous development"):
//   - the baseline is set once (compare-and-set on NULL), so every item sees the same commit;
//   - `releaseNext` turns the first `queued` item into `pending` (compare-and-set on `queued`);
//   - `cancelLaterItems` cancels the not-yet-started (`queued` / `pending`) items after a position
//     (stop of an item, spec "States and transitions": later items of the same batch are cancelled).
import { and, asc, eq, gt, inArray, isNull } from 'drizzle-orm';
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { DatabaseHandle } from '../../client.ts';
import { scopeCondition } from '../../tenant-scope-sql.ts';
import type { BatchRow, WorkflowRow } from './workflows.ts';

export function batchesRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const b = t.autonomousBatches;
  const w = t.autonomousWorkflows;

  return {
    async find(batchId: string): Promise<BatchRow | undefined> {
      const [row] = await db.select().from(b).where(eq(b.batchId, batchId));
      return row;
    },

    /** The batch if inside the scope (and owned by `ownerId` when given). */
    async findFor(r: { scope: ReadScope; ownerId?: number }, batchId: string): Promise<BatchRow | undefined> {
      const scoped = scopeCondition(r.scope, b.tenantId);
      if (scoped === false) return undefined;
      const [row] = await db
        .select()
        .from(b)
        .where(
          and(eq(b.batchId, batchId), scoped, r.ownerId !== undefined ? eq(b.userId, r.ownerId) : undefined),
        );
      return row;
    },

    async items(batchId: string): Promise<WorkflowRow[]> {
      return db.select().from(w).where(eq(w.batchId, batchId)).orderBy(asc(w.batchPosition));
    },

    /** Pins the batch's baseline once; returns the baseline in force (the first writer's). */
    async pinBaseline(batchId: string, sha: string, now: Date = new Date()): Promise<string | null> {
      await db
        .update(b)
        .set({ baselineSha: sha, updatedAt: now })
        .where(and(eq(b.batchId, batchId), eq(b.status, 'active'), isNull(b.baselineSha)));
      const [row] = await db.select({ sha: b.baselineSha }).from(b).where(eq(b.batchId, batchId));
      return row?.sha ?? null;
    },

    /** The first queued item becomes pending; its workflow id, or null when none is queued. */
    async releaseNext(batchId: string, now: Date = new Date()): Promise<string | null> {
      const [next] = await db
        .select({ workflowId: w.workflowId })
        .from(w)
        .where(and(eq(w.batchId, batchId), eq(w.status, 'queued')))
        .orderBy(asc(w.batchPosition))
        .limit(1);
      if (!next) return null;
      const moved = await db
        .update(w)
        .set({ status: 'pending', updatedAt: now, lastTransitionAt: now })
        .where(and(eq(w.workflowId, next.workflowId), eq(w.status, 'queued')))
        .returning({ id: w.id });
      return moved.length > 0 ? next.workflowId : null;
    },

    /** Cancels the not-started items after `position`; returns their workflow ids. */
    async cancelLaterItems(batchId: string, position: number, now: Date = new Date()): Promise<string[]> {
      const rows = await db
        .update(w)
        .set({ status: 'cancelled', updatedAt: now, lastTransitionAt: now, completedAt: now })
        .where(
          and(
            eq(w.batchId, batchId),
            gt(w.batchPosition, position),
            inArray(w.status, ['queued', 'pending']),
          ),
        )
        .returning({ workflowId: w.workflowId });
      return rows.map((r) => r.workflowId);
    },

    async setStatus(batchId: string, status: 'active' | 'completed' | 'cancelled', now: Date = new Date()) {
      await db.update(b).set({ status, updatedAt: now }).where(eq(b.batchId, batchId));
    },

    /** Deletes the batch and its workflows (milestones and lines cascade) in one transaction. */
    async delete(batchId: string): Promise<boolean> {
      return database.transaction(async (tx) => {
        await tx.db.delete(w).where(eq(w.batchId, batchId));
        const rows = await tx.db.delete(b).where(eq(b.batchId, batchId)).returning({ id: b.id });
        return rows.length > 0;
      });
    },
  };
}

export type BatchesRepository = ReturnType<typeof batchesRepository>;
