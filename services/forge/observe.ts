// Gathers one merge observation (domain/forge/merge-decision.ts) from any Forge: behind state, the
// required checks at the head, the mergeable state, and the refusal of the last merge attempt. Reading
// them all afresh IS the spec's rule 2 re-query, so an observation made here is marked re-queried.
// The workflow's merge stage is then: observe -> decideMergeStep -> act -> observe again.
import {
  MAX_CI_REPAIR_ATTEMPTS,
  type MergeObservation,
  type RefusalKind,
  refusalKindOf,
} from '../../domain/forge/merge-decision.ts';
import type { Forge, MergeResult, PullRequest } from '../../domain/forge/types.ts';

export interface MergeContext {
  refusal?: { kind: RefusalKind; reason: string } | null;
  repairedFingerprints?: string[];
  repairAttempts?: number;
  maxRepairAttempts?: number;
}

/** The refusal of a merge result in observation form (null when it merged). */
export function refusalOf(result: MergeResult): MergeContext['refusal'] {
  return result.merged ? null : { kind: refusalKindOf(result.category), reason: result.reason };
}

export async function observeMerge(
  forge: Forge,
  pr: PullRequest,
  ctx: MergeContext = {},
): Promise<MergeObservation> {
  const [behind, checks, m] = [
    await forge.isBehind(pr),
    await forge.checks(pr),
    await forge.mergeability(pr),
  ];
  return {
    behind: behind.behind,
    checks,
    mergeableState: m.state,
    mergeable: m.state === 'dirty' ? false : m.state === 'clean' ? true : null,
    conflictFiles: m.conflictFiles,
    refusal: ctx.refusal ?? null,
    requeriedAfterRefusal: true,
    repairedFingerprints: ctx.repairedFingerprints ?? [],
    repairAttempts: ctx.repairAttempts ?? 0,
    maxRepairAttempts: ctx.maxRepairAttempts ?? MAX_CI_REPAIR_ATTEMPTS,
  };
}
