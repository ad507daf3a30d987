// Milestone vocabulary (spec document 2, "Autonomous workflow records"): one milestone per audit unit,
// with its own incremental usage. Pure.
import type { SessionLineName } from './session-lines.ts';

export const MILESTONE_KINDS = [
  'plan',
  'plan_review',
  'implementation',
  'test',
  'pr_review',
  'ci_diagnosis',
  'conflict_repair',
  'acceptance_verification',
  'feedback',
  'report',
  'merge',
] as const;
export type MilestoneKind = (typeof MILESTONE_KINDS)[number];

/**
 * in_progress -> completed | failed (finalized on the same row); an earlier attempt's row still
 * in_progress when a newer attempt starts -> interrupted; rows after a cancelled round -> cancelled.
 */
export const MILESTONE_STATUSES = ['in_progress', 'completed', 'failed', 'interrupted', 'cancelled'] as const;
export type MilestoneStatus = (typeof MILESTONE_STATUSES)[number];

/**
 * The structured outcome of a step's run, kept on its milestone (`outcome`; spec "Errors" 4: runner
 * failure, empty output, context overflow and no-new-code are recorded separately). The runner's own
 * outcomes (services/autonomous/runner/outcome.ts), plus `context_overflow_recovered` (the run
 * overflowed and its fresh, compact retry on the same line succeeded) and `no_new_code` (the run
 * succeeded but a step that should change code left the worktree unchanged).
 */
export const MILESTONE_OUTCOMES = [
  'ok',
  'runner_failure',
  'empty_output',
  'context_overflow',
  'context_overflow_recovered',
  'no_new_code',
  'timeout',
  'cancelled',
] as const;
export type MilestoneOutcome = (typeof MILESTONE_OUTCOMES)[number];

/**
 * The outcome of one step from its run's structured result: the final outcome, whether any attempt of
 * the run overflowed the context window, and, for a step that commits, whether it produced a commit.
 */
export function milestoneOutcome(run: {
  outcome: Exclude<MilestoneOutcome, 'context_overflow_recovered' | 'no_new_code'>;
  attemptOutcomes: readonly string[];
  expectedCode: boolean;
  committed: boolean;
}): MilestoneOutcome {
  if (run.outcome !== 'ok') return run.outcome;
  if (run.attemptOutcomes.includes('context_overflow')) return 'context_overflow_recovered';
  if (run.expectedCode && !run.committed) return 'no_new_code';
  return 'ok';
}

/** The stable session line each kind runs on (spec "Session lines"). */
export const LINE_OF_KIND: Readonly<Record<MilestoneKind, SessionLineName | null>> = {
  plan: 'main',
  plan_review: 'review',
  implementation: 'main',
  test: 'test',
  pr_review: 'review',
  ci_diagnosis: 'main',
  conflict_repair: 'main',
  acceptance_verification: 'verification',
  feedback: null,
  report: 'main',
  merge: null,
};

/** Usage increments of one step (from the proxy's metering of the line's token during the step). */
export interface UsageIncrement {
  totalTokens: number;
  inputTokens: number;
  outputTokens: number;
  requestCount: number;
}
