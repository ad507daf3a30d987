// The CI repair loop's two judgements, pure (issue 15 item 3; spec document 2 "Limits" and the
// execution isolation paragraph):
//
// Evidence (`ciLogEvidence`): a failed check is only handed to the repairing agent with a log that
// says something. A log tail that is missing, empty, or holds only the forge's own `[svc]` notes is
// `logs_not_ready`: the workflow polls it again (LIMITS.ciLogDiagnosticsPolls times), then fails with
// a permission hint (domain/autonomous/errors.ts `ci_evidence_insufficient`). A forge that cannot read
// the log at all says `no_permission` itself (CiEvidenceInsufficientError).
//
// Fix validation (`judgeCiFix`): the baseline is the remote PR head and the digest of the effective
// PR diff (merge base .. head) taken before the repair; after the repair's commit and push, only a
// change of that effective diff is a fix. A head that did not move (the agent changed nothing) is not
// a fix; a head that moved while the effective diff stayed the same (a main-branch sync merged into
// the branch, or a commit that only re-applied what main has) is never counted as one.
export type CiLogEvidence = 'ok' | 'logs_not_ready' | 'no_permission';

export function ciLogEvidence(logTail: string | null | undefined): Exclude<CiLogEvidence, 'no_permission'> {
  if (!logTail) return 'logs_not_ready';
  for (const raw of logTail.split('\n')) {
    const line = raw.trim();
    if (line && !line.startsWith('[svc] ')) return 'ok';
  }
  return 'logs_not_ready';
}

export interface FixBaseline {
  headSha: string;
  mergeBaseSha: string;
  /** sha256 of the effective PR diff (file list with counts, then the diff text). */
  diffDigest: string;
}

export type FixVerdict = { fixed: true; reason: string } | { fixed: false; reason: string };

export function judgeCiFix(before: FixBaseline, after: FixBaseline): FixVerdict {
  if (after.headSha === before.headSha)
    return { fixed: false, reason: 'the repair changed nothing: the PR head did not move' };
  if (after.diffDigest === before.diffDigest)
    return {
      fixed: false,
      reason:
        after.mergeBaseSha !== before.mergeBaseSha
          ? 'the PR head moved only by a main-branch sync: its effective diff is unchanged (a sync is not a fix)'
          : 'the PR head moved but its effective diff is unchanged: no new in-scope change',
    };
  return { fixed: true, reason: `the effective PR diff changed (${after.headSha.slice(0, 12)})` };
}
