// The fix validation baseline of a pull request on any Forge (issue 15 item 3; judged by
// domain/forge/ci-repair.ts judgeCiFix): its remote head, the merge base and a digest of its
// effective diff (merge base .. head: the file list with counts, then the diff text as the forge
// returns it, truncation included). A main-branch sync moves the head and the merge base but leaves
// the effective diff of the PR's own change as it was, so it never reads as a fix.
import { createHash } from 'node:crypto';
import type { FixBaseline } from '../../domain/forge/ci-repair.ts';
import type { Forge, PullRequest } from '../../domain/forge/types.ts';

export async function fixBaseline(forge: Pick<Forge, 'prDiff'>, pr: PullRequest): Promise<FixBaseline> {
  const d = await forge.prDiff(pr);
  const h = createHash('sha256');
  for (const f of d.files) h.update(`${f.path}\t${f.additions}\t${f.deletions}\n`);
  h.update(`\n${d.truncated ? 'truncated' : 'complete'}\n${d.diff}`);
  return { headSha: d.headSha, mergeBaseSha: d.mergeBaseSha, diffDigest: h.digest('hex') };
}
