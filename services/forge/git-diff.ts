// Reading diffs and merges out of a repository for the forge: numstat parsing (`-z`, no renames, so
// one record per path; binary files count 0/0), a commit's stats against its first parent, and the
// conflict check of two commits without a worktree (`git merge-tree --write-tree`, git >= 2.38).
import { GitCommandError } from '../../domain/forge/errors.ts';
import type { DiffStats, FileStat } from '../../domain/forge/types.ts';
import { type GitOptions, type git, nulFields } from './git.ts';

/** Parses `git diff --numstat -z --no-renames` output. */
export function parseNumstat(out: string): DiffStats {
  const files: FileStat[] = [];
  let additions = 0;
  let deletions = 0;
  for (const rec of nulFields(out)) {
    const t1 = rec.indexOf('\t');
    const t2 = rec.indexOf('\t', t1 + 1);
    if (t1 < 0 || t2 < 0) continue;
    const a = rec.slice(0, t1);
    const d = rec.slice(t1 + 1, t2);
    const f: FileStat = {
      path: rec.slice(t2 + 1).replace(/^\n/, ''),
      additions: a === '-' ? 0 : Number(a),
      deletions: d === '-' ? 0 : Number(d),
    };
    files.push(f);
    additions += f.additions;
    deletions += f.deletions;
  }
  return { files, additions, deletions };
}

type Run = (args: string[], extra?: Partial<GitOptions>) => ReturnType<typeof git>;

/** Stats between two commits (`from` may be the empty tree for a root commit). */
export async function diffBetween(run: Run, from: string, to: string): Promise<DiffStats> {
  const out = await run([
    'diff',
    '--numstat',
    '-z',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    from,
    to,
  ]);
  return parseNumstat(out.stdout);
}

/** A commit's stats against its first parent (a root commit: against the empty tree). */
export async function commitStats(run: Run, sha: string): Promise<DiffStats> {
  const parents = (await run(['rev-list', '--parents', '-n', '1', sha])).stdout.trim().split(' ');
  if (parents.length > 1) return diffBetween(run, parents[1]!, sha);
  const out = await run([
    'diff-tree',
    '-r',
    '--root',
    '--no-commit-id',
    '--numstat',
    '-z',
    '--no-renames',
    sha,
  ]);
  return parseNumstat(out.stdout);
}

/** Whether merging `theirs` into `ours` conflicts, and the merged tree when it does not. */
export async function trialMerge(
  run: Run,
  ours: string,
  theirs: string,
): Promise<{ clean: true; tree: string } | { clean: false; files: string[] }> {
  const r = await run(['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', ours, theirs], {
    check: false,
  });
  const [tree, ...files] = nulFields(r.stdout);
  if (r.code === 0 && tree) return { clean: true, tree };
  if (r.code === 1) return { clean: false, files: [...new Set(files)] };
  throw new GitCommandError(['merge-tree'], r.code, r.stderr);
}
