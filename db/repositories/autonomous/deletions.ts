// The SQL of deleting autonomous workflows and batches when, and only when, their status still allows
// it (services/autonomous/delete.ts decides which statuses). Compare-and-set: the DELETE carries the
// allowed statuses in its WHERE, so a workflow that moved on (a scheduler claimed a pending one, a
// user resumed a failed one) between the caller's read and the delete is not deleted, and the caller
// answers 409 instead. A batch is deleted in one transaction only if none of its items is outside the
// allowed statuses (its item rows are locked first on PostgreSQL). Milestones and session lines go with
// their workflow (ON DELETE CASCADE).
import { and, eq, inArray, notInArray } from 'drizzle-orm';
import type { DatabaseHandle } from '../../client.ts';
import type { WorkflowRow } from './workflows.ts';

export function autonomousDeletionsRepository(database: DatabaseHandle) {
  const { db, t, dialect } = database;
  const w = t.autonomousWorkflows;
  const b = t.autonomousBatches;

  return {
    /** Deletes the workflow if its status is one of `statuses`; false when it is gone or moved on. */
    async deleteWorkflowIn(workflowId: string, statuses: readonly string[]): Promise<boolean> {
      const rows = await db
        .delete(w)
        .where(and(eq(w.workflowId, workflowId), inArray(w.status, [...statuses])))
        .returning({ id: w.id });
      return rows.length > 0;
    },

    /**
     * Deletes the batch and all its items if every item's status is one of `statuses`. Returns the
     * deleted items, or `{blocked}` naming an item that is not deletable (nothing deleted then).
     */
    async deleteBatchIn(
      batchId: string,
      statuses: readonly string[],
    ): Promise<{ deleted: WorkflowRow[] } | { blocked: WorkflowRow }> {
      return database.transaction(async (tx) => {
        if (dialect === 'postgres')
          await tx.sql.query('SELECT id FROM autonomous_workflows WHERE batch_id = ? FOR UPDATE', [batchId]);
        const [blocked] = await tx.db
          .select()
          .from(w)
          .where(and(eq(w.batchId, batchId), notInArray(w.status, [...statuses])))
          .limit(1);
        if (blocked) return { blocked };
        const deleted = await tx.db.delete(w).where(eq(w.batchId, batchId)).returning();
        await tx.db.delete(b).where(eq(b.batchId, batchId));
        return { deleted };
      });
    },
  };
}
