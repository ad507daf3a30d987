// The pre-commit gate of the orchestrator's commits (services/forge/pre-commit.ts convergePreCommit),
// keyed by the workflow row: runs the repository's declared hook in the workflow's worktree until it
// converges (at most 3 passes). A hook that fails or never converges is a non-retryable failure whose
// message starts with its code (`pre_commit_failed`, `pre_commit_not_converged`, `pre_commit_invalid`):
// the step's milestone records it and the step fails visibly; nothing is committed.
import { ApplicationFailure } from '@temporalio/activity';
import { workflowsRepository } from '../../db/repositories/autonomous/workflows.ts';
import { decideIsolation } from '../../services/autonomous/runner/isolation/decide.ts';
import { convergePreCommit, PreCommitError } from '../../services/forge/pre-commit.ts';
import type { ActivityDeps } from '../deps.ts';

export const PRE_COMMIT_FAILURE = 'PreCommitFailed';

export function createPreCommitGate(deps: ActivityDeps) {
  const workflows = workflowsRepository(deps.database);
  return async function preCommitGate(workflowId: string): Promise<void> {
    const r = await workflows.find(workflowId);
    if (!r?.preferredWorktreePath || !r.baselineSha) return; // commit() reports the missing worktree
    // The hook is repository code: it runs as the agent account when agents are isolated (issue 15).
    const isolation = decideIsolation(deps.settings);
    if (isolation.kind === 'refused')
      throw ApplicationFailure.nonRetryable(`pre_commit_failed: ${isolation.reason}`, PRE_COMMIT_FAILURE);
    try {
      await convergePreCommit({
        worktreePath: r.preferredWorktreePath,
        baseSha: r.baselineSha,
        runtimesDir: deps.settings.SVC_RUNTIMES_DIR ?? null,
        agent: isolation.kind === 'isolated' ? isolation : null,
        sandbox: deps.settings.SVC_SANDBOX,
      });
    } catch (err) {
      if (err instanceof PreCommitError)
        throw ApplicationFailure.nonRetryable(err.message, PRE_COMMIT_FAILURE);
      throw err;
    }
  };
}
