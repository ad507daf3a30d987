// The merge stage's next step, as the spec's "Merge-stage decision order" (document 2) over one
// structured observation of the pull request. Pure: the workflow gathers the evidence through the
// Forge interface (isBehind, CI runs, mergeability, the refusal of the last merge attempt), calls
// `decideMergeStep`, and carries out the action. Each decision names the numbered rule it applied.
//
//  1. behind main (and no conflict evidence, since a sync would only fail) -> `sync_and_wait`: sync,
//     wait for the new CI, return; no repair attempt consumed.
//  2. a refused merge whose checks and mergeable state were not re-read after the refusal -> `requery`.
//  3. new failing checks -> `ci_repair` (a failure whose fingerprint was already repaired ->
//     `fail_visible`, so one failure is not "repaired" forever; attempts exhausted -> `fail_visible`);
//     pending checks -> `wait`. A cancelled check is not a code failure: with nothing failing it asks
//     for a re-run and a `wait`, never a repair.
//  4. no pending checks and a real conflict (dirty state, an explicit conflict refusal, or mergeable
//     false with no better state) -> `resolve_conflict`. Authoritative dirty state outranks generic
//     repository-rule text: dirty + a rule refusal is still a conflict.
//  5. no failing, pending or conflict evidence but an explicit repository-rule, required-check,
//     review, draft or branch-protection refusal -> `pause_for_rules` (status `paused`, resumable
//     when the requirement is met).
//  6. permission, API or infrastructure refusals -> `fail_visible` with their original reason; any
//     other refusal also fails visibly with its reason. Other mergeable states (unknown, unstable,
//     has_hooks...) are diagnostic only: they never decide; with nothing else in the way -> `merge`.
//
// No Node imports: the Temporal workflow may call this directly (deterministic, no I/O).

import { LIMITS } from '../autonomous/limits.ts';
import type { CheckEvidence, CiStatus, MergeRefusalCategory } from './types.ts';

export type { CheckEvidence };

export type RefusalKind =
  | 'conflict'
  | 'rule'
  | 'required_check'
  | 'review'
  | 'draft'
  | 'branch_protection'
  | 'permission'
  | 'api'
  | 'infrastructure'
  | 'other';

export interface MergeObservation {
  /** The PR branch does not contain the base branch's tip. */
  behind: boolean;
  checks: CheckEvidence[];
  /** The forge's mergeable state as reported (`clean`, `dirty`, `behind`, `blocked`, `unknown`...). */
  mergeableState: string | null;
  /** The forge's boolean mergeable flag, when it reports one (GitHub); null when unknown. */
  mergeable: boolean | null;
  conflictFiles?: string[];
  /** The refusal of the last merge attempt (structured kind plus its original text). */
  refusal: { kind: RefusalKind; reason: string } | null;
  /** Whether `checks` and `mergeableState` were read after that refusal (rule 2). */
  requeriedAfterRefusal: boolean;
  /** Fingerprints of failures already handed to CI repair. */
  repairedFingerprints: string[];
  repairAttempts: number;
  maxRepairAttempts: number;
}

export type MergeAction =
  | 'sync_and_wait'
  | 'requery'
  | 'ci_repair'
  | 'wait'
  | 'resolve_conflict'
  | 'pause_for_rules'
  | 'fail_visible'
  | 'merge';

export interface MergeDecision {
  action: MergeAction;
  /** The numbered rule of the spec's decision order that decided (0: nothing in the way). */
  rule: 0 | 1 | 2 | 3 | 4 | 5 | 6;
  reason: string;
  /** Only `ci_repair` consumes one of the automatic repair attempts. */
  consumesRepairAttempt: boolean;
  /** ci_repair: the new failing checks; wait: the pending checks and the cancelled ones to re-run. */
  failing?: CheckEvidence[];
  pending?: string[];
  rerun?: string[];
  conflictFiles?: string[];
}

/** States that explain a `mergeable: false` better than a conflict. */
const BETTER_THAN_CONFLICT = new Set(['behind', 'blocked', 'draft', 'unstable', 'has_hooks', 'clean']);
const RULE_KINDS = new Set<RefusalKind>(['rule', 'required_check', 'review', 'draft', 'branch_protection']);
const INFRA_KINDS = new Set<RefusalKind>(['permission', 'api', 'infrastructure']);

/** Spec "Limits": automatic CI repair attempts (one definition: domain/autonomous/limits.ts). */
export const MAX_CI_REPAIR_ATTEMPTS: number = LIMITS.ciRepairAttempts;

/** A forge CI run's status as check evidence: an errored run (timeout, unusable command) is failing. */
export function checkStateOfCi(status: CiStatus | 'missing'): CheckEvidence['state'] {
  switch (status) {
    case 'passed':
      return 'passed';
    case 'failed':
    case 'error':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    case 'queued':
    case 'running':
    case 'missing':
      return 'pending';
    default:
      return assertNever(status);
  }
}

/** A forge merge refusal's category as the refusal kind of an observation. */
export function refusalKindOf(category: MergeRefusalCategory): RefusalKind {
  switch (category) {
    case 'conflict':
      return 'conflict';
    case 'failing':
    case 'pending':
      return 'required_check';
    case 'rule':
      return 'rule';
    case 'error':
      return 'infrastructure';
    default:
      return assertNever(category);
  }
}

function assertNever(x: never): never {
  throw new Error(`unhandled value ${String(x)}`);
}

function hasConflictEvidence(o: MergeObservation): boolean {
  const state = o.mergeableState?.toLowerCase() ?? null;
  if (state === 'dirty') return true;
  if (o.refusal?.kind === 'conflict') return true;
  return o.mergeable === false && (state === null || !BETTER_THAN_CONFLICT.has(state));
}

export function decideMergeStep(o: MergeObservation): MergeDecision {
  const conflict = hasConflictEvidence(o);
  const conflictFiles = o.conflictFiles ?? [];
  // Infrastructure refusals are not evidence about the PR: they fail visibly whatever else is seen.
  if (o.refusal && INFRA_KINDS.has(o.refusal.kind))
    return { action: 'fail_visible', rule: 6, reason: o.refusal.reason, consumesRepairAttempt: false };

  // 1. Behind main: sync first (a sync that would conflict is rule 4's business).
  if (o.behind && !conflict)
    return {
      action: 'sync_and_wait',
      rule: 1,
      reason: 'the PR branch is behind the base branch: sync it and wait for the new CI',
      consumesRepairAttempt: false,
    };

  // 2. A refusal is only acted on with fresh check results and mergeable state.
  if (o.refusal && !o.requeriedAfterRefusal)
    return {
      action: 'requery',
      rule: 2,
      reason: `merge refused (${o.refusal.reason}): re-read checks and mergeable state`,
      consumesRepairAttempt: false,
    };

  // 3. Failing checks -> repair (new ones only), pending -> wait; cancelled is never a failure.
  const failing = o.checks.filter((c) => c.state === 'failed');
  const pending = o.checks.filter((c) => c.state === 'pending').map((c) => c.name);
  const cancelled = o.checks.filter((c) => c.state === 'cancelled').map((c) => c.name);
  if (failing.length) {
    const known = new Set(o.repairedFingerprints);
    const fresh = failing.filter((c) => !c.fingerprint || !known.has(c.fingerprint));
    if (!fresh.length)
      return {
        action: 'fail_visible',
        rule: 3,
        reason: `the same failure persists after repair: ${failing.map((c) => c.name).join(', ')}`,
        consumesRepairAttempt: false,
        failing,
      };
    if (o.repairAttempts >= o.maxRepairAttempts)
      return {
        action: 'fail_visible',
        rule: 3,
        reason: `automatic CI repair attempts exhausted (${o.maxRepairAttempts})`,
        consumesRepairAttempt: false,
        failing: fresh,
      };
    return {
      action: 'ci_repair',
      rule: 3,
      reason: `failing checks: ${fresh.map((c) => c.name).join(', ')}`,
      consumesRepairAttempt: true,
      failing: fresh,
    };
  }
  if (pending.length || cancelled.length)
    return {
      action: 'wait',
      rule: 3,
      reason: pending.length
        ? `checks pending: ${pending.join(', ')}`
        : `checks cancelled (not a code failure), re-run: ${cancelled.join(', ')}`,
      consumesRepairAttempt: false,
      pending,
      rerun: cancelled,
    };

  // 4. A real conflict; dirty outranks any rule text.
  if (conflict)
    return {
      action: 'resolve_conflict',
      rule: 4,
      reason: conflictFiles.length
        ? `merge conflict in ${conflictFiles.join(', ')}`
        : `merge conflict (${o.refusal?.kind === 'conflict' ? o.refusal.reason : `mergeable state ${o.mergeableState ?? 'not mergeable'}`})`,
      consumesRepairAttempt: false,
      conflictFiles,
    };

  // 5. An explicit rule refusal with nothing else to explain it.
  if (o.refusal && RULE_KINDS.has(o.refusal.kind))
    return {
      action: 'pause_for_rules',
      rule: 5,
      reason: o.refusal.reason,
      consumesRepairAttempt: false,
    };

  // 6. Any other refusal keeps its reason and fails visibly; other states are diagnostic only.
  if (o.refusal)
    return { action: 'fail_visible', rule: 6, reason: o.refusal.reason, consumesRepairAttempt: false };

  return {
    action: 'merge',
    rule: 0,
    reason:
      o.mergeableState && o.mergeableState !== 'clean'
        ? `no failing, pending or conflict evidence (mergeable state ${o.mergeableState} is diagnostic only)`
        : 'checks passed, up to date, no conflict',
    consumesRepairAttempt: false,
  };
}
