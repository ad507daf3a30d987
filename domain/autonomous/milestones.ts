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
