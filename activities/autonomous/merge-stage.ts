// Activities of the merge stage's CI repair (workflows/autonomous/workflow.ts merge(); issue 15 item
// 3): reading a failed check's log evidence (polled by the workflow, domain/forge/ci-repair.ts
// ciLogEvidence; each read is kept on the row as its CI diagnostics state), and the fix validation baseline and verdict (judgeCiFix: the remote PR head and the
// effective PR diff before the repair vs after its push). Inputs and results carry ids, shas,
// digests and the log tail the agent is shown (8 KiB), never secrets.
import { ApplicationFailure } from '@temporalio/activity';
import { workflowsRepository } from '../../db/repositories/autonomous/workflows.ts';
import { LIMITS } from '../../domain/autonomous/limits.ts';
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
import type { ActivityDeps } from '../deps.ts';

/** Seconds between two reads of a failed check's log when it says nothing yet (settings override). */
export const DEFAULT_CI_LOG_POLL_SECONDS = 30;

/**
 * The row's CI diagnostics state (`ci_diagnostics_state`, JSON), written at every read of a failed
 * check's log: `diagnosed` (usable evidence went to repair), `waiting` (no usable log yet: read again
 * later, no repair attempt consumed) or `insufficient` (LIMITS.ciLogDiagnosticsPolls reads without
 * one: the workflow fails with a permission hint). `polls` counts the reads without usable evidence
 * of the current failure.
 */
export interface CiDiagnosticsState {
  status: 'diagnosed' | 'waiting' | 'insufficient';
  evidence: CiLogEvidence;
  polls: number;
  max_polls: number;
  checked_at: string;
}

export function ciDiagnosticsState(
  evidence: CiLogEvidence,
  unusableReadsBefore: number,
  at: Date,
): CiDiagnosticsState {
  const max = LIMITS.ciLogDiagnosticsPolls;
  const polls = evidence === 'ok' ? unusableReadsBefore : unusableReadsBefore + 1;
  const status = evidence === 'ok' ? 'diagnosed' : polls >= max ? 'insufficient' : 'waiting';
  return { status, evidence, polls, max_polls: max, checked_at: at.toISOString() };
}

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
      /** Reads of this failure's log without usable evidence so far (the workflow's count). */
      unusableReads?: number;
    }): Promise<{ evidence: CiLogEvidence; logTail: string | null; pollSeconds: number }> {
      const pollSeconds = deps.settings.autonomous.ci_log_poll_seconds ?? DEFAULT_CI_LOG_POLL_SECONDS;
      const { forge, pr } = await pullRequestOf(input.workflowId);
      let found: { evidence: CiLogEvidence; logTail: string | null };
      try {
        const run = await forge.latestCi(pr);
        const log = run?.logTail ?? null;
        const tail = log && log.length > CI_LOG_FOR_PROMPT_BYTES ? log.slice(-CI_LOG_FOR_PROMPT_BYTES) : log;
        found = { evidence: ciLogEvidence(log), logTail: tail };
      } catch (err) {
        if (!(err instanceof CiEvidenceInsufficientError)) throw err;
        found = { evidence: err.reason, logTail: null };
      }
      const state = ciDiagnosticsState(found.evidence, input.unusableReads ?? 0, deps.now());
      await workflows.update(input.workflowId, { ciDiagnosticsState: JSON.stringify(state) }, deps.now());
      return { ...found, pollSeconds };
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
