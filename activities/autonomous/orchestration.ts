// Activities of the autonomous workflow's orchestrator (workflows/autonomous/workflow.ts): state
// persistence, milestones, the workspace and forge operations, batch moves. Thin wrappers over
// services/autonomous/{workflow-context,workspace}.ts and the repositories, each idempotent (Temporal
// retries an activity whose worker died). Inputs and results carry ids, shas, counters and text the
// workflow already holds or the agent wrote; never a secret.
//
// Forge failures become ApplicationFailures here (domain/forge/error-class.ts): transient git errors
// stay retryable (Temporal's retry policy is the "short retries in the phase"); an integrity
// violation, the changed-files limit and any other forge refusal are non-retryable with a stable type
// the workflow maps to its transition.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { batchesRepository } from '../../db/repositories/autonomous/batches.ts';
import { milestonesRepository } from '../../db/repositories/autonomous/milestones.ts';
import {
  parseFingerprints,
  type WorkflowFields,
  type WorkflowRow,
  workflowsRepository,
} from '../../db/repositories/autonomous/workflows.ts';
import type { MilestoneKind, UsageIncrement } from '../../domain/autonomous/milestones.ts';
import type { Phase } from '../../domain/autonomous/states.ts';
import type { WorkflowState } from '../../domain/autonomous/transitions.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { classifyForgeError } from '../../domain/forge/error-class.ts';
import { activityBusFor, statusEvent } from '../../services/autonomous/activity-bus.ts';
import { loadAutonomousContext } from '../../services/autonomous/workflow-context.ts';
import { autonomousWorkspace } from '../../services/autonomous/workspace.ts';
import type { MergeContext } from '../../services/forge/observe.ts';
import type { ActivityDeps } from '../deps.ts';
import { createPreCommitGate } from './pre-commit.ts';

/** ApplicationFailure types the workflow reads. */
export const FAILURE = {
  integrity: 'RepoIntegrityViolation',
  changedFiles: 'ChangedFilesLimit',
  forge: 'ForgeRefused',
  missing: 'NotFound',
} as const;

async function forgeCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof NotFoundError) throw ApplicationFailure.nonRetryable(err.message, FAILURE.missing);
    const f = classifyForgeError(err);
    if (!f) throw err;
    if (f.kind === 'changed_files_limit')
      throw ApplicationFailure.nonRetryable(`too_many_changed_files: ${f.message}`, FAILURE.changedFiles);
    if (f.kind === 'visible') throw ApplicationFailure.nonRetryable(f.message, FAILURE.forge);
    if (f.error.class === 'repo_integrity_violation')
      throw ApplicationFailure.nonRetryable((err as Error).message, FAILURE.integrity);
    throw err;
  }
}

/** Workflow columns the orchestrator may set with a transition (dates as epoch ms: history is JSON). */
export interface TransitionFields {
  error?: string | null;
  developmentRound?: number;
  ciRepairAttempts?: number;
  /**
   * Fingerprints of CI failures just handed to repair (domain/forge/fingerprint.ts): appended to the
   * row's list (oldest first, each once, so a retried activity adds nothing twice).
   */
  newCiFailureFingerprints?: string[];
  planningDeadlineAt?: number | null;
  phaseStarted?: boolean;
  verificationStatus?: string | null;
  verifiedBy?: string | null;
  verified?: boolean;
  pauseContext?: string | null;
  timeoutContext?: string | null;
  feedbackContext?: string | null;
  resumeContext?: string | null;
  manualOverrideContext?: string | null;
  retried?: boolean;
}

export function createAutonomousOrchestrationActivities(deps: ActivityDeps) {
  const workflows = workflowsRepository(deps.database);
  const milestones = milestonesRepository(deps.database);
  const batches = batchesRepository(deps.database);
  const workspace = autonomousWorkspace(deps);
  const preCommitGate = createPreCommitGate(deps);
  const bus = activityBusFor(deps.database);
  const at = () => deps.now().toISOString();

  const toColumns = (f: TransitionFields, row: WorkflowRow): WorkflowFields => {
    const now = deps.now();
    const cols: WorkflowFields = {};
    if (f.error !== undefined) cols.error = f.error;
    if (f.developmentRound !== undefined) cols.developmentRound = f.developmentRound;
    if (f.ciRepairAttempts !== undefined) cols.ciRepairAttempts = f.ciRepairAttempts;
    if (f.newCiFailureFingerprints?.length) {
      const list = parseFingerprints(row.ciFailureFingerprints);
      for (const fp of f.newCiFailureFingerprints) if (!list.includes(fp)) list.push(fp);
      cols.ciFailureFingerprints = JSON.stringify(list);
    }
    if (f.planningDeadlineAt !== undefined)
      cols.planningDeadlineAt = f.planningDeadlineAt === null ? null : new Date(f.planningDeadlineAt);
    if (f.phaseStarted) cols.phaseStartedAt = now;
    if (f.verificationStatus !== undefined) cols.verificationStatus = f.verificationStatus;
    if (f.verifiedBy !== undefined) cols.verifiedBy = f.verifiedBy;
    if (f.verified) cols.verifiedAt = now;
    for (const k of [
      'pauseContext',
      'timeoutContext',
      'feedbackContext',
      'resumeContext',
      'manualOverrideContext',
    ] as const)
      if (f[k] !== undefined) cols[k] = f[k];
    if (f.retried) cols.retryCount = row.retryCount + 1;
    return cols;
  };

  const publishMilestone = (workflowId: string, id: number, status: string, kind: string) =>
    bus.publish({ workflowId, line: '', type: 'milestone_updated', at: at(), milestoneId: id, status, kind });

  return {
    async loadAutonomousContext(input: { workflowId: string }) {
      return loadAutonomousContext(deps, input.workflowId);
    },

    /** Compare-and-set of the state (and columns); false when the row moved or is gone. */
    async persistAutonomousTransition(input: {
      workflowId: string;
      expectedStatus: string;
      next: WorkflowState;
      fields?: TransitionFields;
    }): Promise<boolean> {
      const row = await workflows.find(input.workflowId);
      if (!row) return false;
      const ok = await workflows.updateStatus(
        input.workflowId,
        input.expectedStatus,
        input.next,
        toColumns(input.fields ?? {}, row),
        deps.now(),
      );
      if (ok && input.expectedStatus !== input.next.status)
        bus.publish(statusEvent(input.workflowId, input.expectedStatus, input.next, deps.now()));
      return ok;
    },

    /** Columns outside the state (round, repair attempts, deadlines). */
    async updateAutonomousFields(input: { workflowId: string; fields: TransitionFields }): Promise<void> {
      const row = await workflows.find(input.workflowId);
      if (row) await workflows.update(input.workflowId, toColumns(input.fields, row), deps.now());
    },

    async prepareAutonomousWorkspace(input: { workflowId: string }) {
      return forgeCall(() => workspace.prepare(input.workflowId));
    },

    /** Starts (or, when the same step key was started before, returns) the step's milestone. */
    async beginAutonomousMilestone(input: {
      workflowId: string;
      stepKey: string;
      kind: MilestoneKind;
      phase: Phase;
      title: string;
      attempt: number;
      sessionLine: string | null;
      sessionId?: string | null;
    }): Promise<{ id: number; sequence: number }> {
      const row = await milestones.begin(
        input.workflowId,
        {
          stepKey: input.stepKey,
          kind: input.kind,
          phase: input.phase,
          title: input.title,
          attempt: input.attempt,
          sessionLine: input.sessionLine,
          sessionId: input.sessionId ?? null,
        },
        deps.now(),
      );
      // The verification attempt count is the number of verifier runs begun (spec "Autonomous workflow
      // records"): counted from the rows, so a retried activity (same step key, same row), a retried
      // phase and a restarted run all agree.
      if (input.kind === 'acceptance_verification') {
        const runs = (await milestones.list(input.workflowId)).filter((m) => m.kind === input.kind);
        await workflows.update(
          input.workflowId,
          { verificationAttempts: runs.length, verificationStatus: 'running' },
          deps.now(),
        );
      }
      publishMilestone(input.workflowId, row.id, row.status, row.kind);
      return { id: row.id, sequence: row.sequence ?? 0 };
    },

    /** Finalizes the milestone on its row and recomputes the workflow totals from the increments. */
    async finishAutonomousMilestone(input: {
      workflowId: string;
      milestoneId: number;
      status: 'completed' | 'failed';
      content?: string | null;
      error?: string | null;
      /** The step run's structured outcome (domain/autonomous/milestones.ts MILESTONE_OUTCOMES). */
      outcome?: string | null;
      usage?: UsageIncrement;
      commit?: { sha: string; files: number; additions: number; deletions: number } | null;
      sessionId?: string | null;
    }): Promise<void> {
      await milestones.finalize(
        input.milestoneId,
        {
          status: input.status,
          content: input.content,
          error: input.error,
          ...(input.outcome !== undefined ? { outcome: input.outcome } : {}),
          usage: input.usage,
          ...(input.commit
            ? {
                commitSha: input.commit.sha,
                diffFiles: input.commit.files,
                diffAdditions: input.commit.additions,
                diffDeletions: input.commit.deletions,
              }
            : {}),
        },
        deps.now(),
      );
      await milestones.recomputeTotals(input.workflowId, deps.now());
      publishMilestone(input.workflowId, input.milestoneId, input.status, '');
    },

    /** A milestone written complete at once (feedback, merge), idempotent by its step key. */
    async recordAutonomousMilestone(input: {
      workflowId: string;
      stepKey: string;
      kind: MilestoneKind;
      phase: Phase;
      title: string;
      content?: string | null;
      commitSha?: string | null;
    }): Promise<{ id: number }> {
      const row = await milestones.begin(
        input.workflowId,
        {
          stepKey: input.stepKey,
          kind: input.kind,
          phase: input.phase,
          title: input.title,
          content: input.content ?? null,
        },
        deps.now(),
      );
      if (row.status === 'in_progress')
        await milestones.finalize(
          row.id,
          { status: 'completed', content: input.content, commitSha: input.commitSha },
          deps.now(),
        );
      publishMilestone(input.workflowId, row.id, 'completed', input.kind);
      return { id: row.id };
    },

    async cancelAutonomousMilestonesAfter(input: {
      workflowId: string;
      milestoneId: number;
    }): Promise<number[]> {
      const ids = (await milestones.cancelAfter(input.workflowId, input.milestoneId, deps.now())) ?? [];
      for (const id of ids) publishMilestone(input.workflowId, id, 'cancelled', '');
      return ids;
    },

    async commitAutonomousChanges(input: { workflowId: string; message: string }) {
      await preCommitGate(input.workflowId); // the declared pre-commit hook converges first (pre-commit.ts)
      return forgeCall(() => workspace.commit(input.workflowId, input.message));
    },

    async openAutonomousPullRequest(input: { workflowId: string; title: string; body: string }) {
      return forgeCall(() => workspace.openPullRequest(input.workflowId, input.title, input.body));
    },

    async pushAutonomousChanges(input: { workflowId: string }) {
      return forgeCall(() => workspace.push(input.workflowId));
    },

    async autonomousChangeSummary(input: { workflowId: string }) {
      return forgeCall(() => workspace.changeSummary(input.workflowId));
    },

    /** Runs the declared CI on the PR head; heartbeats so a dead worker's run is retried elsewhere. */
    async runAutonomousCi(input: { workflowId: string }) {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 2000);
      try {
        return await forgeCall(() => workspace.runCi(input.workflowId, ctx.cancellationSignal));
      } finally {
        clearInterval(beat);
      }
    },

    async decideAutonomousMerge(input: { workflowId: string; ctx: MergeContext }) {
      return forgeCall(() => workspace.decideMerge(input.workflowId, input.ctx));
    },

    async syncAutonomousPullRequest(input: { workflowId: string }) {
      return forgeCall(() => workspace.sync(input.workflowId));
    },

    async mergeAutonomousPullRequest(input: { workflowId: string; title: string }) {
      return forgeCall(() => workspace.merge(input.workflowId, input.title));
    },

    async beginAutonomousConflictResolution(input: { workflowId: string }) {
      return forgeCall(() => workspace.beginConflictResolution(input.workflowId));
    },

    async completeAutonomousConflictResolution(input: { workflowId: string }) {
      return forgeCall(() => workspace.completeConflictResolution(input.workflowId));
    },

    async abortAutonomousConflictResolution(input: { workflowId: string }) {
      return forgeCall(() => workspace.abortConflictResolution(input.workflowId));
    },

    async prepareAutonomousVerification(input: { workflowId: string }) {
      return forgeCall(() => workspace.prepareVerification(input.workflowId));
    },

    async cleanupAutonomousWorkspace(input: { workflowId: string }) {
      await forgeCall(() => workspace.cleanup(input.workflowId));
    },

    /** Stop of a batch item: its not-started later items are cancelled. */
    async cancelLaterAutonomousBatchItems(input: { workflowId: string }): Promise<string[]> {
      const row = await workflows.find(input.workflowId);
      if (!row?.batchId || row.batchPosition == null) return [];
      return batches.cancelLaterItems(row.batchId, row.batchPosition, deps.now());
    },

    /**
     * A batch item is over (or failed): the next queued item becomes pending. Returns its id (the
     * workflow wakes it) or null; the batch is completed when nothing is left to run.
     */
    async releaseNextAutonomousBatchItem(input: { workflowId: string }): Promise<string | null> {
      const row = await workflows.find(input.workflowId);
      if (!row?.batchId) return null;
      const next = await batches.releaseNext(row.batchId, deps.now());
      if (!next) {
        const items = await batches.items(row.batchId);
        if (items.every((i) => ['completed', 'failed', 'cancelled'].includes(i.status)))
          await batches.setStatus(
            row.batchId,
            items.some((i) => i.status === 'completed') ? 'completed' : 'cancelled',
            deps.now(),
          );
      }
      return next;
    },

    /** The oldest pending workflows other than `except` (a freed slot wakes them). */
    async pendingAutonomousWorkflows(input: { except: string; limit: number }): Promise<string[]> {
      return (await workflows.pending(input.limit + 1))
        .map((r) => r.workflowId)
        .filter((id) => id !== input.except)
        .slice(0, input.limit);
    },
  };
}

export type AutonomousOrchestrationActivities = ReturnType<typeof createAutonomousOrchestrationActivities>;
