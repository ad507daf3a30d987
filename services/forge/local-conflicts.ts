// Conflict resolution in the PR's own worktree (spec merge-stage rule 4: "the conflict resolver in an
// isolated worktree bound to the PR branch"): the orchestrator starts the merge of the base into the
// head there, leaving git's conflict markers for the agent; the agent edits files only; the
// orchestrator then checks that nothing is left unresolved and commits the merge (two parents), or
// aborts it. Worktree-level steps on top of local-repositories.ts; local-forge.ts adds the PR-level
// entry points of the Forge interface.
//
// The resolution commit is not held to the changed-files limit: a merge of the base brings the base's
// own changes, which are not the agent's (fix validation must likewise never count a sync as a fix).
import { PullRequestStateError } from '../../domain/forge/errors.ts';
import type { CommitResult, SyncResult, Worktree } from '../../domain/forge/types.ts';
import { nulFields, ORCHESTRATOR_IDENTITY } from './git.ts';
import { commitStats } from './git-diff.ts';
import { LocalRepositories } from './local-repositories.ts';

export class LocalConflictResolution extends LocalRepositories {
  /** Whether a merge is in progress in the worktree (MERGE_HEAD in its admin directory). */
  async mergeInProgress(worktree: Worktree): Promise<boolean> {
    const dir = this.assertWorktreePath(worktree.path);
    const r = await this.inTree(worktree.repoKey, dir, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], {
      check: false,
    });
    return r.code === 0;
  }

  /**
   * Merges `baseSha` into the worktree's branch. Clean -> committed at once (`synced`); conflicts ->
   * the merge stays in progress with markers in `files` for the agent to resolve.
   */
  protected async mergeBaseIntoWorktree(
    worktree: Worktree,
    baseSha: string,
    label: string,
  ): Promise<SyncResult> {
    const dir = this.assertWorktreePath(worktree.path);
    const run = (args: string[], check = true) =>
      this.inTree(worktree.repoKey, dir, args, { env: { ...ORCHESTRATOR_IDENTITY }, check });
    if (await this.mergeInProgress(worktree))
      throw new PullRequestStateError('A merge is already in progress in the worktree');
    if ((await run(['status', '--porcelain', '-z', '--untracked-files=all'])).stdout)
      throw new PullRequestStateError(
        'The worktree has uncommitted changes: commit them before resolving conflicts',
      );
    const head = (await run(['rev-parse', 'HEAD'])).stdout.trim();
    const merged = await run(
      ['-c', 'commit.gpgSign=false', 'merge', '--no-ff', '--no-edit', '--no-verify', '-m', label, baseSha],
      false,
    );
    if (merged.code === 0) {
      const next = (await run(['rev-parse', 'HEAD'])).stdout.trim();
      return next === head
        ? { status: 'up_to_date', headSha: head }
        : { status: 'synced', headSha: next, previousHeadSha: head };
    }
    const files = nulFields((await run(['diff', '--name-only', '-z', '--diff-filter=U'], false)).stdout);
    if (!files.length) {
      await run(['merge', '--abort'], false);
      throw new PullRequestStateError(`Merging the base failed: ${merged.stderr.trim().slice(-300)}`);
    }
    return { status: 'conflict', files };
  }

  /**
   * Commits the agent's resolution of the merge in progress. Refused while an unmerged path or a
   * leftover conflict marker remains (the merge stays in progress).
   */
  async completeConflictResolution(worktree: Worktree, message?: string): Promise<CommitResult> {
    const dir = this.assertWorktreePath(worktree.path);
    const run = (args: string[], check = true) =>
      this.inTree(worktree.repoKey, dir, args, { env: { ...ORCHESTRATOR_IDENTITY }, check });
    if (!(await this.mergeInProgress(worktree)))
      throw new PullRequestStateError('No merge is in progress in the worktree');
    await run(['add', '--all', '--', '.']);
    const markers = await run(['diff', '--cached', '--check', 'HEAD'], false);
    if (markers.code !== 0 && /conflict marker/.test(markers.stdout))
      throw new PullRequestStateError(
        `Conflict markers remain: ${markers.stdout
          .split('\n')
          .filter((l) => l.includes('conflict marker'))
          .slice(0, 5)
          .join('; ')}`,
      );
    const args = ['-c', 'commit.gpgSign=false', 'commit', '--quiet', '--no-verify'];
    await run(message?.trim() ? [...args, '--cleanup=strip', '-m', message] : [...args, '--no-edit']);
    const sha = (await run(['rev-parse', 'HEAD'])).stdout.trim();
    const stats = await commitStats((a, extra) => this.inTree(worktree.repoKey, dir, a, extra), sha);
    return { sha, files: stats.files.length, additions: stats.additions, deletions: stats.deletions };
  }

  /** Abandons the merge in progress; the worktree is back at its branch's head. */
  async abortConflictResolution(worktree: Worktree): Promise<void> {
    const dir = this.assertWorktreePath(worktree.path);
    if (!(await this.mergeInProgress(worktree))) return;
    await this.inTree(worktree.repoKey, dir, ['merge', '--abort']);
  }
}
