// The controls of an autonomous workflow as the API drives them (spec document 2, "States and
// transitions"; issue 13 item 8): pause, resume, stop, retry, cancel-round at a milestone,
// resume-with-feedback, extend-planning-timeout, verification_override and done.
//
// Order, for every control:
//   1. the row is read fresh and the trigger checked with domain/autonomous/transitions.ts `transition`
//      against stateOf(row): a refused control answers 409 with the table's reason BEFORE any round
//      trip to Temporal (retry outside failed/planning_timeout, resume of a non-paused workflow...);
//   1b. a retry also needs the workflow's CLI to be runnable on this machine (cli-check.ts: 400 naming
//      it and how to install it), as at creation: otherwise it would only fail the same way again;
//   2. the control is executed as the contract's Temporal update (its validator runs the same table
//      against the workflow's own state, so a race between two controls is refused there: 409 too);
//      with no open run (e.g. a failed workflow whose run ended) the run is started again and the
//      update executed once more (services/autonomous/temporal-runs.ts);
//   3. the answer is the ControlResult merged into the row as it is now (the workflow persisted the
//      new state before the update returned).
// Update arguments carry the actor's id and name, feedback text and numbers: never a secret.
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import type { MilestoneRow } from '../../db/repositories/autonomous/milestones.ts';
import {
  stateOf,
  type WorkflowRow,
  workflowsRepository,
} from '../../db/repositories/autonomous/workflows.ts';
import { isPhase } from '../../domain/autonomous/states.ts';
import { type Trigger, transition } from '../../domain/autonomous/transitions.ts';
import { ConflictError, NotFoundError } from '../../domain/errors.ts';
import {
  type Actor,
  type ControlResult,
  cancelRoundUpdate,
  doneUpdate,
  extendPlanningTimeoutUpdate,
  pauseUpdate,
  resumeUpdate,
  resumeWithFeedbackUpdate,
  retryUpdate,
  stopUpdate,
  verificationOverrideUpdate,
} from '../../workflows/autonomous/contract.ts';
import { assertAutonomousCliInstalled } from './cli-check.ts';
import type { AutonomousRuns } from './temporal-runs.ts';

export type ControlRequest =
  | { type: 'pause' }
  | { type: 'resume' }
  | { type: 'stop' }
  | { type: 'retry' }
  | { type: 'done' }
  | { type: 'cancel_round'; milestone: MilestoneRow }
  | { type: 'resume_with_feedback'; feedback: string }
  | { type: 'extend_planning_timeout'; seconds?: number }
  | { type: 'verification_override'; note?: string | null };

export type ControlType = ControlRequest['type'];

function triggerOf(c: ControlRequest): Trigger {
  switch (c.type) {
    case 'cancel_round':
      return { type: 'cancel_round', milestonePhase: isPhase(c.milestone.phase) ? c.milestone.phase : null };
    case 'resume_with_feedback':
      return { type: 'resume_with_feedback', feedback: c.feedback };
    default:
      return { type: c.type };
  }
}

export function autonomousControls(deps: {
  database: DatabaseHandle;
  runs: AutonomousRuns;
  settings: { autonomous: Pick<Settings['autonomous'], 'cli_paths' | 'default_cli_tool'> };
}) {
  const workflows = workflowsRepository(deps.database);

  async function execute(workflowId: string, c: ControlRequest, actor: Actor): Promise<ControlResult> {
    const { runs } = deps;
    switch (c.type) {
      case 'pause':
        return runs.control(workflowId, pauseUpdate, { actor });
      case 'resume':
        return runs.control(workflowId, resumeUpdate, { actor });
      case 'stop':
        return runs.control(workflowId, stopUpdate, { actor });
      case 'retry':
        return runs.control(workflowId, retryUpdate, { actor });
      case 'done':
        return runs.control(workflowId, doneUpdate, { actor });
      case 'cancel_round':
        return runs.control(workflowId, cancelRoundUpdate, {
          actor,
          milestoneId: c.milestone.id,
          milestonePhase: c.milestone.phase ?? null,
        });
      case 'resume_with_feedback':
        return runs.control(workflowId, resumeWithFeedbackUpdate, { actor, feedback: c.feedback });
      case 'extend_planning_timeout':
        return runs.control(workflowId, extendPlanningTimeoutUpdate, {
          actor,
          ...(c.seconds !== undefined ? { seconds: c.seconds } : {}),
        });
      case 'verification_override':
        return runs.control(workflowId, verificationOverrideUpdate, { actor, note: c.note ?? null });
    }
  }

  return {
    /** Checks the transition on the fresh row (409 with the reason), then runs the update. */
    async apply(
      workflowId: string,
      c: ControlRequest,
      actor: Actor,
    ): Promise<{ result: ControlResult; row: WorkflowRow }> {
      const row = await workflows.find(workflowId);
      if (!row) throw new NotFoundError('Autonomous workflow not found');
      const checked = transition(stateOf(row), triggerOf(c));
      if (!checked.ok) throw new ConflictError(checked.reason);
      // A retry runs the CLI again: refused like a creation while it cannot be run (cli-check.ts).
      if (c.type === 'retry')
        assertAutonomousCliInstalled(deps.settings, row.cliTool || deps.settings.autonomous.default_cli_tool);
      const result = await execute(workflowId, c, actor);
      return { result, row: (await workflows.find(workflowId)) ?? row };
    },
  };
}
