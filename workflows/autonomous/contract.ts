// The contract between the API and the autonomous Temporal workflow (`autonomous-<id>`,
// workflows/autonomous/workflow.ts): its input, the control updates and signals, and the refusal type.
// The API imports these definitions (never the workflow file), so names and argument shapes live in
// one place. Arguments carry ids, user text (feedback) and identities only: never a secret.
//
// Every control is a Temporal update whose validator runs domain/autonomous/transitions.ts
// `transition` against the workflow's own state: a refused control never touches history and comes back
// as a WorkflowUpdateFailedError whose cause is an ApplicationFailure of type AUTONOMOUS_REFUSED with the
// reason as message (the API answers 409 with it). An accepted control persists the new state
// (compare-and-set) before the update returns, so the row the API reads next shows it.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { WorkflowState } from '../../domain/autonomous/transitions.ts';

export { temporalWorkflowId } from '../../domain/autonomous/transitions.ts';

/** The workflow type name the API starts. */
export const AUTONOMOUS_WORKFLOW_TYPE = 'autonomousWorkflow';

/** ApplicationFailure type of a refused control (API: 409). */
export const AUTONOMOUS_REFUSED = 'AutonomousControlRefused';

export interface AutonomousInput {
  workflowId: string;
  /** Handed over by continue-as-new (the database row is the rest of the state). */
  carried?: AutonomousCarried;
}

export interface AutonomousCarried {
  /** Steps finished in the current phase visit (`<phase>:<round>:<step>`), skipped on re-entry. */
  done: string[];
  /** Attempts per step key (a retry of a step gets the next attempt number). */
  attempts: Record<string, number>;
  /** Usage cursor of each session line (services/autonomous/line-usage.ts). */
  cursors: Record<string, number>;
  /** Planning deadline, epoch ms (workflow time). */
  planningDeadline: number | null;
  /** Failure fingerprints already handed to CI repair. */
  repairedFingerprints: string[];
  /** The next batch item was released (at most once per workflow). */
  batchReleased?: boolean;
}

/** What every control answers: the state after it. */
export interface ControlResult {
  workflow_id: string;
  status: string;
  phase: string;
  paused_by: string | null;
}

/** Who asked (recorded in contexts: verified_by, feedback author, pause context). */
export interface Actor {
  userId: number;
  username: string;
}

export const pauseUpdate = defineUpdate<ControlResult, [{ actor: Actor }]>('autonomous.pause');
export const resumeUpdate = defineUpdate<ControlResult, [{ actor: Actor }]>('autonomous.resume');
export const stopUpdate = defineUpdate<ControlResult, [{ actor: Actor }]>('autonomous.stop');
export const retryUpdate = defineUpdate<ControlResult, [{ actor: Actor }]>('autonomous.retry');
/** Cancel the steps after milestone `milestoneId` and wait for feedback. */
export const cancelRoundUpdate = defineUpdate<
  ControlResult,
  [{ actor: Actor; milestoneId: number; milestonePhase: string | null }]
>('autonomous.cancelRound');
export const resumeWithFeedbackUpdate = defineUpdate<ControlResult, [{ actor: Actor; feedback: string }]>(
  'autonomous.resumeWithFeedback',
);
/** Move the planning deadline `seconds` later than now (default: the planning timeout again). */
export const extendPlanningTimeoutUpdate = defineUpdate<ControlResult, [{ actor: Actor; seconds?: number }]>(
  'autonomous.extendPlanningTimeout',
);
export const verificationOverrideUpdate = defineUpdate<
  ControlResult,
  [{ actor: Actor; note?: string | null }]
>('autonomous.verificationOverride');
export const doneUpdate = defineUpdate<ControlResult, [{ actor: Actor }]>('autonomous.done');

/** The quota schedule saw the owner's quota restored: a `paused (quota)` workflow resumes. */
export const quotaRestoredSignal = defineSignal('autonomous.quotaRestored');
/**
 * The quota enforcement tick (services/quota-enforcement.ts) found the owner or the owner's tenant over
 * quota: a running workflow pauses by quota (`app_quota_exceeded`), as when the model proxy refuses a
 * call, and is auto-resumed by quotaRestoredSignal once quota returns.
 */
export const quotaExceededSignal = defineSignal('autonomous.quotaExceeded');
/** A slot may have freed or a batch item was released: try to start now instead of at the next poll. */
export const wakeSignal = defineSignal('autonomous.wake');

export const stateQuery = defineQuery<WorkflowState>('autonomous.state');
