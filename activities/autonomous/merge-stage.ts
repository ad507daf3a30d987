// Activities of the merge stage's CI repair (workflows/autonomous/workflow.ts merge(); issue 15 item
// 3): reading a failed check's log evidence (polled by the workflow, domain/forge/ci-repair.ts
// ciLogEvidence), and the fix validation baseline and verdict (judgeCiFix: the remote PR head and the
// effective PR diff before the repair vs after its push). Inputs and results carry ids, shas,
// digests and the log tail the agent is shown (8 KiB), never secrets.
import { ApplicationFailure } from '@temporalio/activity';
import { workflowsRepository } from '../../db/repositories/autonomous/workflows.ts';
import {
  type CiLogEvidence,
  ciLogEvidence,
  type FixBaseline,
  judgeCiFix,
} from '../../domain/forge/ci-repair.ts';
import { CiEvidenceInsufficientError } from '../../domain/forge/errors.ts';
import type { Forge, PullRequest } from '../../domain/forge/types.ts';
import { autonomousWorkspace, CI_LOG_FOR_PROMPT_BYTES } from '../../services/autonomous/workspace.ts';
import { fixBaseline } from '../../services/forge/fix-baseline.ts';
import type { ActivityDeps } from '../index.ts';

/** Seconds between two reads of a failed check's log when it says nothing yet (settings override). */
export const DEFAULT_CI_LOG_POLL_SECONDS = 30;

export function createAutonomousMergeStageActivities(deps: ActivityDeps) {
  const workflows = workflowsRepository(deps.database);
  const workspace = autonomousWorkspace(deps);

  async function pullRequestOf(workflowId: string): Promise<{ forge: Forge; pr: PullRequest }> {
    const r = await workflows.find(workflowId);
    if (!r || r.projectId == null || !r.projectPath || r.prNumber == null)
      throw ApplicationFailure.nonRetryable(
        `Autonomous workflow ${workflowId} has no pull request`,
        'NotFound',
      );
    // The project's own forge, by the one rule (services/autonomous/workspace.ts forgeOf).
    const forge: Forge = await workspace.forgeOf(r);
    const repo = await forge.ensureRepository({ id: r.projectId, path: r.projectPath });
    return { forge, pr: await forge.getPullRequest(repo, r.prNumber) };
  }

  return {
    /**
     * The latest CI run's log at the PR head as evidence for a repair: `ok` with the tail the agent
     * sees, or why it is not usable yet. `pollSeconds`: how long the workflow waits before reading again.
     */
    async autonomousCiEvidence(input: {
      workflowId: string;
    }): Promise<{ evidence: CiLogEvidence; logTail: string | null; pollSeconds: number }> {
      const pollSeconds = deps.settings.autonomous.ci_log_poll_seconds ?? DEFAULT_CI_LOG_POLL_SECONDS;
      const { forge, pr } = await pullRequestOf(input.workflowId);
      try {
        const run = await forge.latestCi(pr);
        const log = run?.logTail ?? null;
        const tail = log && log.length > CI_LOG_FOR_PROMPT_BYTES ? log.slice(-CI_LOG_FOR_PROMPT_BYTES) : log;
        return { evidence: ciLogEvidence(log), logTail: tail, pollSeconds };
      } catch (err) {
        if (err instanceof CiEvidenceInsufficientError)
          return { evidence: err.reason, logTail: null, pollSeconds };
        throw err;
      }
    },

    /** The fix validation baseline: the remote PR head and the digest of its effective diff. */
    async autonomousCiFixBaseline(input: { workflowId: string }): Promise<FixBaseline> {
      const { forge, pr } = await pullRequestOf(input.workflowId);
      return fixBaseline(forge, pr);
    },

    /** Whether the repair (committed and pushed) changed the effective PR diff since `before`. */
    async validateAutonomousCiFix(input: {
      workflowId: string;
      before: FixBaseline;
    }): Promise<{ fixed: boolean; reason: string; after: FixBaseline }> {
      const { forge, pr } = await pullRequestOf(input.workflowId);
      const after = await fixBaseline(forge, pr);
      return { ...judgeCiFix(input.before, after), after };
    },
  };
}

export type AutonomousMergeStageActivities = ReturnType<typeof createAutonomousMergeStageActivities>;
