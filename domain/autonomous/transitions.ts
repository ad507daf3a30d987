// The transition table of an autonomous workflow, pure (spec document 2, "States and transitions").
// The Temporal workflow (a later session) holds a WorkflowState, feeds every control and every phase
// outcome through `transition`, persists `next` (compare-and-set on the status:
// db/repositories/autonomous/workflows.ts updateStatus) and then carries out `effects` in order. The
// API calls the same function to answer 409 with `reason` before any round trip to Temporal.
//
// Rows of the spec's table and where they live below:
//   pause                active (not paused/planning_timeout)   -> paused(manual)     freeze_process if running
//   resume               paused (any reason)                    -> previous status    thaw_process (manual pause
//                                                                                     of a running phase) else schedule_phase
//   stop                 any active                             -> cancelled          terminate_process, cancel_later_batch_items
//   retry                failed | planning_timeout              -> persisted phase    schedule_phase
//   cancel_round         a milestone's later steps              -> waiting            cancel_steps_after_milestone
//   resume_with_feedback waiting + feedback                     -> suitable phase     store_feedback_milestone
//   planning_timeout     planning                               -> planning_timeout   terminate_process
//   extend_planning_...  planning | planning_timeout            -> planning           extend_planning_deadline
//   merge_succeeded      merging (acceptance on)                -> verification_pending  cleanup_branch_and_worktree
//   merge_succeeded      merging (acceptance off)               -> completed          cleanup_branch_and_worktree (*)
//   verifier_verdict     verification_pending confirmed         -> completed          close_issue
//   verifier_verdict     rejected | indeterminate | exhausted   -> paused(verification)
//   verification_override paused(verification)                  -> completed          record_verified_by, close_issue
//   hard_quota_error     any running                            -> paused(hard_quota)  manual resume only
//   app_quota_exceeded   any running                            -> paused(quota)      schedule_auto_resume
//   quota_restored       paused(quota) only                     -> previous status    (a manual pause is never auto-resumed)
//   merge_refused_by_rules merging                              -> paused(repository_rules)
//   ci_repair_exhausted  merging                                -> failed
//   transient_error      any running, below limit               -> same status        retry_step; at the limit -> failed
// Beyond the table (the spec leaves them open; chosen here): start (pending -> the persisted phase),
// queue_release (queued -> pending), phase_completed (the linear order; merge completes like
// merge_succeeded), done (wrap up -> completed), fail (-> failed).
// (*) the table names the clean-up only for the acceptance-on row; a merged branch's worktree is of no
// use after completion either, so both rows clean up.
// Every terminal transition except `failed` (which can be retried) also emits close_session_lines.
import {
  assertExhaustive,
  feedbackReturnPhase,
  isActive,
  isRunning,
  isTerminal,
  type LinearPhase,
  nextPhase,
  type PauseReason,
  PHASE_STATUS,
  type Phase,
  STATUS_CLASS,
  type WorkflowStatus,
} from './states.ts';

export interface WorkflowState {
  status: WorkflowStatus;
  phase: Phase;
  /** Set exactly when status is `paused`. */
  pausedBy: PauseReason | null;
  /** The status before `paused` / `planning_timeout` (what resume returns to). */
  previousStatus: WorkflowStatus | null;
  /** Set while `waiting`: where resume_with_feedback continues. */
  feedbackPhase: LinearPhase | null;
  /** A batch item: stopping it cancels the later not-started items of its batch. */
  inBatch: boolean;
}

export type VerifierVerdict = 'confirmed' | 'rejected' | 'indeterminate' | 'retries_exhausted';

export type Trigger =
  | { type: 'pause' }
  | { type: 'resume' }
  | { type: 'stop' }
  | { type: 'retry' }
  | { type: 'cancel_round'; milestonePhase: Phase | null }
  | { type: 'resume_with_feedback'; feedback: string }
  | { type: 'planning_timeout' }
  | { type: 'extend_planning_timeout' }
  | { type: 'merge_succeeded'; acceptanceEnabled: boolean }
  | { type: 'verifier_verdict'; verdict: VerifierVerdict }
  | { type: 'verification_override' }
  | { type: 'hard_quota_error' }
  | { type: 'app_quota_exceeded' }
  | { type: 'quota_restored' }
  | { type: 'merge_refused_by_rules' }
  | { type: 'ci_repair_exhausted' }
  | { type: 'transient_error'; belowLimit: boolean }
  | { type: 'phase_completed'; acceptanceEnabled: boolean }
  | { type: 'start' }
  | { type: 'queue_release' }
  | { type: 'done' }
  | { type: 'fail' };
export type TriggerType = Trigger['type'];

export const TRIGGER_TYPES = [
  'pause',
  'resume',
  'stop',
  'retry',
  'cancel_round',
  'resume_with_feedback',
  'planning_timeout',
  'extend_planning_timeout',
  'merge_succeeded',
  'verifier_verdict',
  'verification_override',
  'hard_quota_error',
  'app_quota_exceeded',
  'quota_restored',
  'merge_refused_by_rules',
  'ci_repair_exhausted',
  'transient_error',
  'phase_completed',
  'start',
  'queue_release',
  'done',
  'fail',
] as const satisfies readonly TriggerType[];

/** Side effects the caller carries out after persisting the new state (idempotent handlers). */
export type Effect =
  /** SIGSTOP the line's running CLI process group (the runner's desired state `paused`). */
  | 'freeze_process'
  /** SIGCONT the frozen process group. */
  | 'thaw_process'
  /** Kill the running (or frozen) CLI process group, if any. */
  | 'terminate_process'
  /** Run (or re-run) the current phase's step. */
  | 'schedule_phase'
  /** Retry the failed step in the same phase (backoff from errors.ts). */
  | 'retry_step'
  | 'cancel_later_batch_items'
  | 'cancel_steps_after_milestone'
  | 'store_feedback_milestone'
  /** Arm the planning timer (planning timeout from now). */
  | 'start_planning_deadline'
  /** Move the planning deadline later. */
  | 'extend_planning_deadline'
  | 'cleanup_branch_and_worktree'
  | 'close_issue'
  | 'record_verified_by'
  /** Leave resumption to the 60 s quota schedule (quota_restored). */
  | 'schedule_auto_resume'
  /** Revoke the lines' proxy tokens and complete their sessions. */
  | 'close_session_lines';

export type TransitionResult =
  | { ok: true; next: WorkflowState; effects: Effect[] }
  | { ok: false; reason: string };

const refuse = (reason: string): TransitionResult => ({ ok: false, reason });
const describe = (s: WorkflowState) =>
  s.status === 'paused' && s.pausedBy ? `paused (${s.pausedBy})` : s.status;
const notFrom = (action: string, s: WorkflowState, rule: string) =>
  refuse(`cannot ${action} a workflow that is ${describe(s)}: ${rule}`);

/** A process may be live (running, or frozen by a pause). */
const mayHaveProcess = (s: WorkflowState) => isRunning(s.status) || s.status === 'paused';

function enter(
  s: WorkflowState,
  phase: Phase,
  effects: Effect[],
  extra: Partial<WorkflowState> = {},
): TransitionResult {
  const status = PHASE_STATUS[phase];
  const planning: Effect[] = phase === 'planning' ? ['start_planning_deadline'] : [];
  const work: Effect[] = phase === 'wait' ? [] : ['schedule_phase'];
  return {
    ok: true,
    next: { ...s, status, phase, pausedBy: null, previousStatus: null, feedbackPhase: null, ...extra },
    effects: [...effects, ...work, ...planning],
  };
}

function finish(s: WorkflowState, status: 'completed' | 'cancelled' | 'failed', effects: Effect[]) {
  const closing: Effect[] = status === 'failed' ? [] : ['close_session_lines'];
  return {
    ok: true as const,
    next: { ...s, status, pausedBy: null, previousStatus: null, feedbackPhase: null },
    effects: [...effects, ...closing],
  };
}

function pauseFor(s: WorkflowState, pausedBy: PauseReason, effects: Effect[]): TransitionResult {
  return { ok: true, next: { ...s, status: 'paused', pausedBy, previousStatus: s.status }, effects };
}

const linear = (p: Phase): p is LinearPhase => p !== 'wait';

export function transition(s: WorkflowState, trigger: Trigger): TransitionResult {
  switch (trigger.type) {
    case 'pause': {
      if (s.status === 'paused') return refuse('the workflow is already paused');
      if (s.status === 'planning_timeout')
        return notFrom('pause', s, 'extend the planning timeout, retry or stop it instead');
      if (!isActive(s.status)) return notFrom('pause', s, 'only active workflows can be paused');
      return pauseFor(s, 'manual', isRunning(s.status) ? ['freeze_process'] : []);
    }

    case 'resume': {
      if (s.status !== 'paused') return notFrom('resume', s, 'only a paused workflow can be resumed');
      const back = s.previousStatus && isActive(s.previousStatus) ? s.previousStatus : PHASE_STATUS[s.phase];
      const effects: Effect[] = !isRunning(back)
        ? []
        : s.pausedBy === 'manual'
          ? ['thaw_process']
          : ['schedule_phase'];
      return { ok: true, next: { ...s, status: back, pausedBy: null, previousStatus: null }, effects };
    }

    case 'stop': {
      if (!isActive(s.status)) return notFrom('stop', s, 'it is already over');
      const effects: Effect[] = mayHaveProcess(s) ? ['terminate_process'] : [];
      if (s.inBatch) effects.push('cancel_later_batch_items');
      return finish(s, 'cancelled', effects);
    }

    case 'retry': {
      if (s.status !== 'failed' && s.status !== 'planning_timeout')
        return notFrom('retry', s, 'retry is only for failed or planning_timeout workflows');
      return enter(s, s.phase, []);
    }

    case 'cancel_round': {
      if (STATUS_CLASS[s.status] === 'scheduling')
        return notFrom('cancel a round of', s, 'it has not started yet');
      if (s.status === 'completed' || s.status === 'cancelled')
        return notFrom('cancel a round of', s, 'it is already over');
      return enter(
        s,
        'wait',
        [...(mayHaveProcess(s) ? (['terminate_process'] as Effect[]) : []), 'cancel_steps_after_milestone'],
        {
          feedbackPhase: feedbackReturnPhase(trigger.milestonePhase),
        },
      );
    }

    case 'resume_with_feedback': {
      if (s.status !== 'waiting')
        return notFrom('resume with feedback', s, 'only a waiting workflow takes feedback');
      if (trigger.feedback.trim() === '') return refuse('feedback is required');
      return enter(s, s.feedbackPhase ?? 'development', ['store_feedback_milestone']);
    }

    case 'planning_timeout': {
      if (s.status !== 'planning') return notFrom('time out planning of', s, 'only planning times out');
      return {
        ok: true,
        next: { ...s, status: 'planning_timeout', previousStatus: 'planning' },
        effects: ['terminate_process'],
      };
    }

    case 'extend_planning_timeout': {
      if (s.status === 'planning') return { ok: true, next: s, effects: ['extend_planning_deadline'] };
      if (s.status === 'planning_timeout')
        return {
          ok: true,
          next: { ...s, status: 'planning', phase: 'planning', previousStatus: null },
          effects: ['extend_planning_deadline', 'schedule_phase'],
        };
      return notFrom('extend the planning timeout of', s, 'only planning or planning_timeout workflows');
    }

    case 'merge_succeeded': {
      if (s.status !== 'merging')
        return notFrom('complete the merge of', s, 'only a merging workflow merges');
      if (trigger.acceptanceEnabled)
        return enter(s, 'acceptance_verification', ['cleanup_branch_and_worktree']);
      return finish(s, 'completed', ['cleanup_branch_and_worktree']);
    }

    case 'verifier_verdict': {
      if (s.status !== 'verification_pending')
        return notFrom('record a verdict for', s, 'only verification_pending takes a verdict');
      switch (trigger.verdict) {
        case 'confirmed':
          return finish(s, 'completed', ['close_issue']);
        case 'rejected':
        case 'indeterminate':
        case 'retries_exhausted':
          return pauseFor(s, 'verification', []);
        default:
          return assertExhaustive(trigger.verdict);
      }
    }

    case 'verification_override': {
      if (s.status !== 'paused' || s.pausedBy !== 'verification')
        return notFrom(
          'override the verification of',
          s,
          'only a workflow paused by its acceptance verification',
        );
      return finish(s, 'completed', ['record_verified_by', 'close_issue']);
    }

    case 'hard_quota_error': {
      if (!isRunning(s.status)) return notFrom('pause for hard quota', s, 'only a running workflow');
      return pauseFor(s, 'hard_quota', ['terminate_process']);
    }

    case 'app_quota_exceeded': {
      if (!isRunning(s.status)) return notFrom('pause for quota', s, 'only a running workflow');
      return pauseFor(s, 'quota', ['terminate_process', 'schedule_auto_resume']);
    }

    case 'quota_restored': {
      if (s.status !== 'paused') return notFrom('auto-resume', s, 'only a paused workflow');
      if (s.pausedBy !== 'quota')
        return refuse(
          s.pausedBy === 'manual'
            ? 'a manual pause is never auto-resumed'
            : `a workflow paused (${s.pausedBy}) is resumed only by a person`,
        );
      const back = s.previousStatus && isActive(s.previousStatus) ? s.previousStatus : PHASE_STATUS[s.phase];
      return {
        ok: true,
        next: { ...s, status: back, pausedBy: null, previousStatus: null },
        effects: isRunning(back) ? ['schedule_phase'] : [],
      };
    }

    case 'merge_refused_by_rules': {
      if (s.status !== 'merging') return notFrom('pause for repository rules', s, 'only a merging workflow');
      return pauseFor(s, 'repository_rules', []);
    }

    case 'ci_repair_exhausted': {
      if (s.status !== 'merging') return notFrom('fail CI repair of', s, 'only a merging workflow');
      return finish(s, 'failed', []);
    }

    case 'transient_error': {
      if (!isRunning(s.status)) return notFrom('retry a step of', s, 'only a running workflow');
      if (trigger.belowLimit) return { ok: true, next: s, effects: ['retry_step'] };
      return finish(s, 'failed', ['terminate_process']);
    }

    case 'phase_completed': {
      if (!isRunning(s.status) || !linear(s.phase) || PHASE_STATUS[s.phase] !== s.status)
        return notFrom('complete a phase of', s, 'only the running phase completes');
      if (s.phase === 'acceptance_verification')
        return refuse('acceptance verification completes by a verifier verdict');
      if (s.phase === 'merge')
        return transition(s, { type: 'merge_succeeded', acceptanceEnabled: trigger.acceptanceEnabled });
      const next = nextPhase(s.phase, trigger.acceptanceEnabled);
      if (next === 'done') return finish(s, 'completed', []);
      return enter(s, next, []);
    }

    case 'start': {
      if (s.status !== 'pending') return notFrom('start', s, 'only a pending workflow is started');
      return enter(s, s.phase, []);
    }

    case 'queue_release': {
      if (s.status !== 'queued') return notFrom('release', s, 'only a queued workflow');
      return { ok: true, next: { ...s, status: 'pending' }, effects: [] };
    }

    case 'done': {
      if (s.status === 'completed' || s.status === 'cancelled')
        return notFrom('mark done', s, 'it is already over');
      if (STATUS_CLASS[s.status] === 'scheduling') return notFrom('mark done', s, 'it has not started yet');
      return finish(s, 'completed', [
        ...(mayHaveProcess(s) ? (['terminate_process'] as Effect[]) : []),
        'cleanup_branch_and_worktree',
      ]);
    }

    case 'fail': {
      if (isTerminal(s.status)) return notFrom('fail', s, 'it is already over');
      return finish(s, 'failed', mayHaveProcess(s) ? ['terminate_process'] : []);
    }

    default:
      return assertExhaustive(trigger);
  }
}

/** The initial state of a new workflow: a batch item after the first is `queued`, the rest `pending`. */
export function initialState(opts: { queued: boolean; inBatch: boolean }): WorkflowState {
  return {
    status: opts.queued ? 'queued' : 'pending',
    phase: 'preparation',
    pausedBy: null,
    previousStatus: null,
    feedbackPhase: null,
    inBatch: opts.inBatch,
  };
}

/** The Temporal workflow id of an autonomous workflow (issue 13: `autonomous-<id>`). */
export const temporalWorkflowId = (workflowId: string): string => `autonomous-${workflowId}`;
