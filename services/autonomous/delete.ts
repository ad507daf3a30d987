// Deleting autonomous workflows and batches (spec document 2, "Autonomous development": DELETE
// /api/autonomous/workflows/:id and /api/autonomous/batches/:id).
//
// Rule: a workflow whose status is running or held (domain/autonomous/states.ts classes), other than
// `failed`, is refused with 409 "stop the workflow before deleting it": deleting it would leave an
// agent or a merge half done. Deletable: queued, pending (not started yet), completed, failed,
// cancelled. For a batch the rule holds for every item; nothing is deleted unless all items pass.
// Order, per workflow:
//   1. the row is deleted compare-and-set on the deletable statuses
//      (db/repositories/autonomous/deletions.ts): a workflow that moved on since it was read (a
//      scheduler claimed it) is not deleted and the answer is 409; milestones and session lines
//      cascade;
//   2. its Temporal run is terminated when one is open (queued/pending items wait in a run too; a
//      missing or finished run is fine). A run that looks at its row between 1 and 2 finds none and
//      ends by itself;
//   3. its worktree directory is removed through the local forge (a missing one is fine; a path outside
//      the forge's worktree root is never touched: the forge refuses it, and that is logged).
// Deleting first means a failure in 2 or 3 leaves at worst an orphan run (terminated by Temporal's
// own retention) or a directory under the forge's worktree root, never a row without its history.
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { autonomousDeletionsRepository } from '../../db/repositories/autonomous/deletions.ts';
import type { WorkflowRow } from '../../db/repositories/autonomous/workflows.ts';
import { STATUS_CLASS, WORKFLOW_STATUSES, type WorkflowStatus } from '../../domain/autonomous/states.ts';
import { ConflictError } from '../../domain/errors.ts';
import { LocalRepositories } from '../forge/local-repositories.ts';
import type { AutonomousRuns } from './temporal-runs.ts';

interface Deps {
  database: DatabaseHandle;
  settings: Pick<Settings, 'dataDir' | 'AUTONOMOUS_MAX_CHANGED_FILES'>;
  runs: AutonomousRuns;
  logger: Logger;
}

export const STOP_BEFORE_DELETE = 'stop the workflow before deleting it';

const deletable = (s: WorkflowStatus) => {
  const cls = STATUS_CLASS[s];
  return !(cls === 'running' || cls === 'held') || s === 'failed';
};
/** queued, pending, completed, failed, cancelled. */
export const DELETABLE_STATUSES: readonly WorkflowStatus[] = WORKFLOW_STATUSES.filter(deletable);

const refusal = (status: string) => `cannot delete a workflow that is ${status}: ${STOP_BEFORE_DELETE}`;

export function autonomousDeletion(deps: Deps) {
  const deletions = autonomousDeletionsRepository(deps.database);

  async function removeWorktree(row: WorkflowRow) {
    if (!row.preferredWorktreePath || row.projectId == null) return;
    try {
      const forge = new LocalRepositories({
        dataDir: deps.settings.dataDir,
        maxChangedFiles: deps.settings.AUTONOMOUS_MAX_CHANGED_FILES,
      });
      await forge.removeWorktree({
        repoKey: LocalRepositories.repoKeyOf(row.projectId),
        path: row.preferredWorktreePath,
        branch: row.branch ?? '',
        baseSha: row.baselineSha ?? '',
      });
    } catch (err) {
      deps.logger.warn(
        { err: (err as Error).message, workflowId: row.workflowId },
        'autonomous worktree not removed',
      );
    }
  }

  /** After the row is gone: the run and the worktree. */
  async function release(row: WorkflowRow) {
    try {
      await deps.runs.terminate(row.workflowId, 'workflow deleted');
    } catch (err) {
      deps.logger.warn(
        { err: (err as Error).message, workflowId: row.workflowId },
        'autonomous run not terminated after delete',
      );
    }
    await removeWorktree(row);
  }

  return {
    async deleteWorkflow(row: WorkflowRow): Promise<void> {
      if (!DELETABLE_STATUSES.includes(row.status as WorkflowStatus))
        throw new ConflictError(refusal(row.status));
      if (!(await deletions.deleteWorkflowIn(row.workflowId, DELETABLE_STATUSES)))
        throw new ConflictError(`the workflow changed while being deleted: ${STOP_BEFORE_DELETE}`);
      await release(row);
    },

    /** Returns the deleted items' ids. */
    async deleteBatch(batchId: string): Promise<string[]> {
      const r = await deletions.deleteBatchIn(batchId, DELETABLE_STATUSES);
      if ('blocked' in r)
        throw new ConflictError(`batch item ${r.blocked.workflowId}: ${refusal(r.blocked.status)}`);
      for (const item of r.deleted) await release(item);
      return r.deleted.map((i) => i.workflowId);
    },
  };
}
