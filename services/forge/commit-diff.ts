// One commit's diff on the local forge (GET /api/autonomous/workflows/:id/milestones/:mid/diff): the
// patch text against the commit's first parent (a root commit: against the empty tree) and its
// add/delete statistics (git-diff.ts commitStats, complete even when the text is cut). The text is cut
// at `maxBytes` (settings.forge.diff_max_bytes) and says so with `truncated`. Read only: the bare
// repository of the project is only read, through git.ts (no shell, clean environment, timeout).
import path from 'node:path';
import { isObjectId } from '../../domain/forge/branch-name.ts';
import { ForgePathError } from '../../domain/forge/errors.ts';
import type { DiffStats } from '../../domain/forge/types.ts';
import { DEFAULT_GIT_TIMEOUT_MS, type GitOptions, git } from './git.ts';
import { commitStats } from './git-diff.ts';
import type { LocalRepositories } from './local-repositories.ts';

export interface CommitDiff extends DiffStats {
  sha: string;
  diff: string;
  truncated: boolean;
}

export async function commitDiff(
  forge: Pick<LocalRepositories, 'gitDir' | 'forgeDir'>,
  repoKey: string,
  sha: string,
  maxBytes: number,
): Promise<CommitDiff> {
  const gitDir = forge.gitDir(repoKey);
  const run = (args: string[], extra: Partial<GitOptions> = {}) =>
    git(args, {
      timeoutMs: DEFAULT_GIT_TIMEOUT_MS,
      home: path.join(forge.forgeDir, '.home'),
      ...extra,
      cwd: gitDir,
      env: { GIT_DIR: gitDir },
    });
  const known =
    isObjectId(sha) && (await run(['cat-file', '-e', `${sha}^{commit}`], { check: false })).code === 0;
  if (!known) throw new ForgePathError(`Not a commit of ${repoKey}: ${sha}`);
  const stats = await commitStats(run, sha);
  const parents = (await run(['rev-list', '--parents', '-n', '1', sha])).stdout.trim().split(' ');
  const common = ['--no-color', '--no-ext-diff', '--no-textconv', '--no-renames'];
  const text =
    parents.length > 1
      ? await run(['diff', ...common, parents[1]!, sha], { maxOutputBytes: maxBytes, truncate: true })
      : await run(['diff-tree', '-p', '-r', '--root', '--no-commit-id', ...common, sha], {
          maxOutputBytes: maxBytes,
          truncate: true,
        });
  return { ...stats, sha, diff: text.stdout, truncated: text.truncated };
}
