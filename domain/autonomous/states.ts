// Phases and statuses of an autonomous workflow, pure (spec document 2, "States and transitions").
// The sets below are the vocabulary of the transition table (transitions.ts): every status is classed
// exactly once in STATUS_CLASS, so a new status cannot be added without deciding what it is.
//
//   queued, pending                        -> waiting to be scheduled           ("active", not running)
//   preparing ... merging,
//   verification_pending                   -> a phase is being worked           ("active" and "running")
//   waiting, paused, planning_timeout      -> held for a human                  ("active", not running)
//   completed, failed, cancelled           -> over (failed can be retried)      (terminal)
//
// "active statuses" of the spec's table = every non-terminal status; "any running status" = the seven
// statuses whose phase is being worked (an agent process or an orchestrator step may be live).

export const PHASE_ORDER = [
  'preparation',
  'planning',
  'development',
  'pr_review',
  'report',
  'merge',
  'acceptance_verification',
] as const;
export type LinearPhase = (typeof PHASE_ORDER)[number];
/** `wait` (user feedback) is outside the linear order. */
export type Phase = LinearPhase | 'wait';
export const PHASES: readonly Phase[] = [...PHASE_ORDER, 'wait'];

export const WORKFLOW_STATUSES = [
  'queued',
  'pending',
  'preparing',
  'planning',
  'developing',
  'pr_review',
  'reporting',
  'waiting',
  'merging',
  'verification_pending',
  'paused',
  'planning_timeout',
  'completed',
  'failed',
  'cancelled',
] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export type StatusClass = 'scheduling' | 'running' | 'held' | 'terminal';

export const STATUS_CLASS: Readonly<Record<WorkflowStatus, StatusClass>> = {
  queued: 'scheduling',
  pending: 'scheduling',
  preparing: 'running',
  planning: 'running',
  developing: 'running',
  pr_review: 'running',
  reporting: 'running',
  merging: 'running',
  verification_pending: 'running',
  waiting: 'held',
  paused: 'held',
  planning_timeout: 'held',
  completed: 'terminal',
  failed: 'terminal',
  cancelled: 'terminal',
};

/** The status a workflow shows while a phase is being worked. */
export const PHASE_STATUS: Readonly<Record<Phase, WorkflowStatus>> = {
  preparation: 'preparing',
  planning: 'planning',
  development: 'developing',
  pr_review: 'pr_review',
  report: 'reporting',
  merge: 'merging',
  acceptance_verification: 'verification_pending',
  wait: 'waiting',
};

/** Why a `paused` workflow is paused; only `quota` is resumed by the scheduler. */
export const PAUSE_REASONS = ['manual', 'quota', 'hard_quota', 'verification', 'repository_rules'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export const isWorkflowStatus = (v: unknown): v is WorkflowStatus =>
  typeof v === 'string' && (WORKFLOW_STATUSES as readonly string[]).includes(v);
export const isPhase = (v: unknown): v is Phase =>
  typeof v === 'string' && (PHASES as readonly string[]).includes(v);
export const isPauseReason = (v: unknown): v is PauseReason =>
  typeof v === 'string' && (PAUSE_REASONS as readonly string[]).includes(v);

export const isTerminal = (s: WorkflowStatus): boolean => STATUS_CLASS[s] === 'terminal';
/** The spec's "active statuses": anything not over. */
export const isActive = (s: WorkflowStatus): boolean => STATUS_CLASS[s] !== 'terminal';
/** The spec's "any running status": a phase is being worked. */
export const isRunning = (s: WorkflowStatus): boolean => STATUS_CLASS[s] === 'running';
/** Occupies a slot of `agent_max_concurrent_workflows` and of the user's `max_sessions_per_user`. */
export const holdsConcurrencySlot = isRunning;

export const ACTIVE_STATUSES = WORKFLOW_STATUSES.filter(isActive);
export const RUNNING_STATUSES = WORKFLOW_STATUSES.filter(isRunning);
export const TERMINAL_STATUSES = WORKFLOW_STATUSES.filter(isTerminal);

/** The phase after `phase` in the linear order (acceptance check disabled: merge is the last one). */
export function nextPhase(phase: LinearPhase, acceptanceEnabled: boolean): LinearPhase | 'done' {
  if (phase === 'merge' && !acceptanceEnabled) return 'done';
  const i = PHASE_ORDER.indexOf(phase);
  return i === PHASE_ORDER.length - 1 ? 'done' : PHASE_ORDER[i + 1]!;
}

/**
 * Where feedback after a cancelled round continues ("returns to a suitable phase"): the plan is redone
 * for a round cancelled at or before planning; anything after it goes back to development, since
 * feedback on code, review, report, merge or verification asks for code changes.
 */
export function feedbackReturnPhase(milestonePhase: Phase | null | undefined): LinearPhase {
  switch (milestonePhase) {
    case 'preparation':
    case 'planning':
      return 'planning';
    case 'development':
    case 'pr_review':
    case 'report':
    case 'merge':
    case 'acceptance_verification':
    case 'wait':
    case null:
    case undefined:
      return 'development';
    default:
      return assertExhaustive(milestonePhase);
  }
}

export function assertExhaustive(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
