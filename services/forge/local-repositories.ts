// The repositories half of the local forge (services/forge/local-forge.ts builds pull requests, CI and
// merges on it): bare repositories, worktrees, orchestrator commits and branches, all on this server.
//
// Layout under `<data dir>/forge/` (the forge dir; nothing else writes there):
//   <project id>.git      a bare repository per project, cloned (--bare --no-hardlinks) from the
//                         project's path on first use. It is the source of truth from then on: the
//                         project's own repository is only ever read (import, refreshFromProject),
//                         never written, by the forge or the agent.
//   worktrees/            the default root for workflow worktrees (createWorktree refuses any path
//                         outside its worktree root, also through symlinks); each is an independent
//                         worktree of the bare repository on its own branch (`svc/wf-<workflow id>`),
//                         pinned to a baseline.
//   ci/, sync/            short-lived detached worktrees for CI runs and for syncs; removed after use.
//   .home/                HOME of every git call (no user config is ever read, see git.ts).
//
// After a merge the project's own repository is NOT updated: the bare repository's default branch
// holds the merged change, and the project owner pulls it (`git pull <data dir>/forge/<id>.git main`,
// shown by `pullCommand`). Writing into a repository a person may be working in (dirty tree, other
// branch checked out, their hooks) is not ours to do. `refreshFromProject` brings later commits of the
// project's default branch in when they fast-forward ours.
//
// Push is a no-op here (worktrees share the bare repository's refs); it checks the branch exists.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../../domain/autonomous/limits.ts';
import { assertBranchName, isObjectId } from '../../domain/forge/branch-name.ts';
import {
  ChangedFilesLimitError,
  ForgePathError,
  GitCommandError,
  ProjectRepositoryError,
  PullRequestStateError,
} from '../../domain/forge/errors.ts';
import type {
  CommitResult,
  DiffStats,
  ForgeProject,
  ForgeRepository,
  Worktree,
} from '../../domain/forge/types.ts';
import { DEFAULT_GIT_TIMEOUT_MS, type GitOptions, git, ORCHESTRATOR_IDENTITY } from './git.ts';
import { commitStats, parseNumstat } from './git-diff.ts';
import { readHeadBranch, readRefFile } from './ref-files.ts';

/** Spec "Limits": changed files per automatic change (AUTONOMOUS_MAX_CHANGED_FILES overrides). */
export const DEFAULT_MAX_CHANGED_FILES: number = LIMITS.maxChangedFiles;

export interface LocalRepositoriesOptions {
  dataDir: string;
  /** Where workflow worktrees may be created (default `<data dir>/forge/worktrees`). */
  worktreeRoot?: string;
  /** Changed files one commitAll may hold (AUTONOMOUS_MAX_CHANGED_FILES, default 60). */
  maxChangedFiles?: number;
  gitTimeoutMs?: number;
}

const REPO_PREFIX = 'local:';
/** Branch tips remembered as commits (branchTip) before the memory starts over. */
const KNOWN_COMMITS_MAX = 10_000;

/** Whether `child` is strictly inside `root` (both resolved; no `..` escapes, no prefix tricks). */
export function isInside(root: string, child: string): boolean {
  const rel = path.relative(path.resolve(root), path.resolve(child));
  return rel.length > 0 && !rel.startsWith('..') && !path.isAbsolute(rel);
}

export class LocalRepositories {
  readonly forgeDir: string;
  readonly worktreeRoot: string;
  protected readonly home: string;
  protected readonly maxChangedFiles: number;
  protected readonly gitTimeoutMs: number;
  private scratch = 0;

  constructor(opts: LocalRepositoriesOptions) {
    this.forgeDir = path.resolve(opts.dataDir, 'forge');
    this.worktreeRoot = path.resolve(opts.worktreeRoot ?? path.join(this.forgeDir, 'worktrees'));
    this.home = path.join(this.forgeDir, '.home');
    for (const d of [
      this.forgeDir,
      this.worktreeRoot,
      this.home,
      this.scratchRoot('ci'),
      this.scratchRoot('sync'),
    ])
      mkdirSync(d, { recursive: true });
    this.maxChangedFiles = opts.maxChangedFiles ?? DEFAULT_MAX_CHANGED_FILES;
    this.gitTimeoutMs = opts.gitTimeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  }

  // ---- plumbing -------------------------------------------------------------------------------

  protected scratchRoot(kind: 'ci' | 'sync') {
    return path.join(this.forgeDir, kind);
  }

  protected scratchPath(kind: 'ci' | 'sync', label: string) {
    return path.join(this.scratchRoot(kind), `${label}-${process.pid}-${Date.now()}-${++this.scratch}`);
  }

  /** The bare repository of a repo key (`local:<positive integer>` only: the key never names a path). */
  gitDir(repoKey: string): string {
    const id = repoKey.startsWith(REPO_PREFIX) ? repoKey.slice(REPO_PREFIX.length) : '';
    if (!/^[1-9][0-9]{0,9}$/.test(id)) throw new ForgePathError(`Not a local forge repository: ${repoKey}`);
    return path.join(this.forgeDir, `${id}.git`);
  }

  /** git against the bare repository of `repoKey`. */
  protected bare(repoKey: string, args: string[], extra: Partial<GitOptions> = {}) {
    const gitDir = this.gitDir(repoKey);
    return git(args, {
      timeoutMs: this.gitTimeoutMs,
      home: this.home,
      ...extra,
      cwd: gitDir,
      env: { GIT_DIR: gitDir, ...extra.env },
    });
  }

  /**
   * git inside a worktree of `repoKey`. The worktree's `.git` file is agent-writable, so it is never
   * trusted: GIT_DIR is the worktree's admin directory inside the bare repository (found from the
   * bare side, whose `worktrees/<name>/gitdir` names the worktree) and GIT_WORK_TREE the directory.
   * An agent that points `.git` at a config of its own (filters, fsmonitor...) changes nothing here.
   */
  protected async inTree(repoKey: string, dir: string, args: string[], extra: Partial<GitOptions> = {}) {
    const admin = this.adminDirOf(repoKey, dir);
    return git(args, {
      timeoutMs: this.gitTimeoutMs,
      home: this.home,
      ...extra,
      cwd: dir,
      env: { GIT_DIR: admin, GIT_WORK_TREE: dir, ...extra.env },
    });
  }

  protected adminDirOf(repoKey: string, dir: string): string {
    const root = path.join(this.gitDir(repoKey), 'worktrees');
    const want = new Set([path.join(dir, '.git')]);
    if (existsSync(dir)) want.add(path.join(realpathSync(dir), '.git'));
    for (const name of existsSync(root) ? readdirSync(root) : []) {
      const file = path.join(root, name, 'gitdir');
      if (existsSync(file) && want.has(readFileSync(file, 'utf8').trim())) return path.join(root, name);
    }
    throw new ForgePathError(`${dir} is not a worktree of ${repoKey}`);
  }

  protected runner(repoKey: string) {
    return (args: string[], extra?: Partial<GitOptions>) => this.bare(repoKey, args, extra);
  }

  /** The commit a ref or sha names, or null when it names none. */
  protected async resolve(repoKey: string, rev: string): Promise<string | null> {
    const r = await this.bare(
      repoKey,
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`],
      {
        check: false,
      },
    );
    const sha = r.stdout.trim();
    return r.code === 0 && isObjectId(sha) ? sha : null;
  }

  /**
   * `<repo key> <id>` of branch tips git confirmed as commits (bounded; an id always names the same
   * object, so a confirmation never goes stale).
   */
  private readonly knownCommits = new Set<string>();

  protected async branchTip(repoKey: string, branch: string): Promise<string | null> {
    const ref = `refs/heads/${assertBranchName(branch)}`;
    // From the ref files, without a git process (ref-files.ts says why). A worktree's commits write
    // these files too, so an id read there is taken as the tip only once git said it is a commit (as
    // `rev-parse ref^{commit}` did for every read before).
    const id = readRefFile(this.gitDir(repoKey), ref);
    if (id === null) return null;
    if (id === undefined) return this.resolve(repoKey, ref);
    const key = `${repoKey} ${id}`;
    if (this.knownCommits.has(key)) return id;
    const commit = await this.resolve(repoKey, id);
    if (commit === id) {
      if (this.knownCommits.size >= KNOWN_COMMITS_MAX) this.knownCommits.clear();
      this.knownCommits.add(key);
    }
    return commit;
  }

  protected async isAncestor(repoKey: string, ancestor: string, descendant: string): Promise<boolean> {
    const r = await this.bare(repoKey, ['merge-base', '--is-ancestor', ancestor, descendant], {
      check: false,
    });
    if (r.code === 0) return true;
    if (r.code === 1) return false;
    throw new GitCommandError(['merge-base'], r.code, r.stderr);
  }

  protected assertWorktreePath(p: string): string {
    if (typeof p !== 'string' || !path.isAbsolute(p))
      throw new ForgePathError('A worktree path must be absolute');
    const resolved = path.resolve(p);
    if (!isInside(this.worktreeRoot, resolved))
      throw new ForgePathError(
        `Worktree path ${resolved} is outside the forge's worktree root ${this.worktreeRoot}`,
      );
    // No symlink on the way may lead out of the root either (the nearest existing ancestor decides).
    let existing = resolved;
    while (!existsSync(existing)) existing = path.dirname(existing);
    const real = realpathSync(existing);
    const realRoot = realpathSync(this.worktreeRoot);
    if (real !== realRoot && !isInside(realRoot, real))
      throw new ForgePathError(`Worktree path ${resolved} leads outside the forge's worktree root`);
    return resolved;
  }

  /** Branch -> worktree path for every worktree of the repository with a branch checked out. */
  protected async checkedOut(repoKey: string): Promise<Map<string, string>> {
    const out = (await this.bare(repoKey, ['worktree', 'list', '--porcelain', '-z'])).stdout;
    const map = new Map<string, string>();
    let current = '';
    for (const field of out.split('\0')) {
      if (field.startsWith('worktree ')) current = field.slice('worktree '.length);
      else if (field.startsWith('branch refs/heads/'))
        map.set(field.slice('branch refs/heads/'.length), current);
    }
    return map;
  }

  protected async removeTree(repoKey: string, dir: string) {
    await this.bare(repoKey, ['worktree', 'remove', '--force', '--force', '--', dir], { check: false });
    rmSync(dir, { recursive: true, force: true });
    await this.bare(repoKey, ['worktree', 'prune'], { check: false });
  }

  /** Contents of `file` at commit `sha`, or null when absent (bounded to 1 MiB). */
  protected async fileAt(repoKey: string, sha: string, file: string): Promise<string | null> {
    const r = await this.bare(repoKey, ['cat-file', 'blob', `${sha}:${file}`], {
      check: false,
      maxOutputBytes: 1024 * 1024,
      truncate: true,
    });
    if (r.code !== 0) return null;
    // A declaration file past the bound is kept cut: an unparsable package.json then fails closed.
    return r.stdout;
  }

  // ---- repositories ---------------------------------------------------------------------------

  static repoKeyOf(projectId: number) {
    return `${REPO_PREFIX}${projectId}`;
  }

  async ensureRepository(project: ForgeProject): Promise<ForgeRepository> {
    if (!Number.isSafeInteger(project.id) || project.id < 1 || project.id > 9_999_999_999)
      throw new ForgePathError('A project id must be a positive integer');
    const repoKey = LocalRepositories.repoKeyOf(project.id);
    const gitDir = this.gitDir(repoKey);
    if (!existsSync(path.join(gitDir, 'HEAD'))) {
      if (typeof project.path !== 'string' || !path.isAbsolute(project.path))
        throw new ProjectRepositoryError('The project path must be absolute');
      if (!existsSync(project.path) || !statSync(project.path).isDirectory())
        throw new ProjectRepositoryError(`The project path ${project.path} is not a directory`);
      const tmp = `${gitDir}.import-${process.pid}-${Date.now()}`;
      const r = await git(['clone', '--bare', '--no-hardlinks', '--quiet', '--', project.path, tmp], {
        cwd: this.forgeDir,
        home: this.home,
        timeoutMs: Math.max(this.gitTimeoutMs, 600_000),
        check: false,
      });
      if (r.code !== 0) {
        rmSync(tmp, { recursive: true, force: true });
        throw new ProjectRepositoryError(
          `Cannot import ${project.path} as a Git repository: ${r.stderr.trim().slice(-300)}`,
        );
      }
      try {
        renameSync(tmp, gitDir);
      } catch {
        // Another caller imported it first: theirs stays.
        rmSync(tmp, { recursive: true, force: true });
      }
    }
    // Every workflow step asks for its repository: HEAD is read from its file when it is a plain one.
    let defaultBranch = readHeadBranch(gitDir);
    if (defaultBranch === undefined) {
      const head = await this.bare(repoKey, ['symbolic-ref', '--short', 'HEAD'], { check: false });
      defaultBranch = head.code === 0 ? head.stdout.trim() : '';
    }
    if (!defaultBranch) throw new ProjectRepositoryError('The project has no default branch');
    assertBranchName(defaultBranch);
    if (!(await this.branchTip(repoKey, defaultBranch)))
      throw new ProjectRepositoryError(`The project's default branch ${defaultBranch} has no commits`);
    return { repoKey, defaultBranch };
  }

  /**
   * Brings new commits of the project's default branch in, when ours fast-forwards to them.
   * `ahead`: ours already contains theirs (merged PRs not yet pulled by the owner); `diverged`: both
   * moved, nothing changed (the owner pulls ours first).
   */
  async refreshFromProject(
    project: ForgeProject,
  ): Promise<{ status: 'updated' | 'up_to_date' | 'ahead' | 'diverged'; sha: string }> {
    const repo = await this.ensureRepository(project);
    const b = repo.defaultBranch;
    await this.bare(
      repo.repoKey,
      ['fetch', '--quiet', '--no-tags', '--', project.path, `+refs/heads/${b}:refs/svc/project/${b}`],
      {
        timeoutMs: Math.max(this.gitTimeoutMs, 600_000),
      },
    );
    const theirs = (await this.resolve(repo.repoKey, `refs/svc/project/${b}`))!;
    const ours = (await this.branchTip(repo.repoKey, b))!;
    if (theirs === ours) return { status: 'up_to_date', sha: ours };
    if (await this.isAncestor(repo.repoKey, ours, theirs)) {
      await this.bare(repo.repoKey, ['update-ref', `refs/heads/${b}`, theirs, ours]);
      return { status: 'updated', sha: theirs };
    }
    if (await this.isAncestor(repo.repoKey, theirs, ours)) return { status: 'ahead', sha: ours };
    return { status: 'diverged', sha: ours };
  }

  /** How the project owner takes merged changes into their own repository. */
  pullCommand(repo: ForgeRepository): string[] {
    return ['git', 'pull', '--ff-only', this.gitDir(repo.repoKey), repo.defaultBranch];
  }

  async baseline(repo: ForgeRepository): Promise<string> {
    const sha = await this.branchTip(repo.repoKey, repo.defaultBranch);
    if (!sha) throw new ProjectRepositoryError(`The default branch ${repo.defaultBranch} has no commits`);
    return sha;
  }

  // ---- worktrees and commits ------------------------------------------------------------------

  async createWorktree(
    repo: ForgeRepository,
    opts: { branch: string; baseSha: string; path: string },
  ): Promise<Worktree> {
    const branch = assertBranchName(opts.branch);
    if (!isObjectId(opts.baseSha)) throw new ForgePathError('The baseline must be a full commit sha');
    const dir = this.assertWorktreePath(opts.path);
    if (existsSync(dir) && readdirSync(dir).length > 0)
      throw new ForgePathError(`Worktree path ${dir} already exists and is not empty`);
    if ((await this.resolve(repo.repoKey, opts.baseSha)) !== opts.baseSha)
      throw new ForgePathError(`The baseline ${opts.baseSha} is not a commit of ${repo.repoKey}`);
    if (await this.branchTip(repo.repoKey, branch))
      throw new PullRequestStateError(`Branch ${branch} already exists`);
    mkdirSync(path.dirname(dir), { recursive: true });
    await this.bare(repo.repoKey, ['worktree', 'add', '--quiet', '-b', branch, '--', dir, opts.baseSha]);
    return { repoKey: repo.repoKey, path: dir, branch, baseSha: opts.baseSha };
  }

  async removeWorktree(worktree: Worktree): Promise<void> {
    const dir = this.assertWorktreePath(worktree.path);
    await this.removeTree(worktree.repoKey, dir);
  }

  async commitAll(worktree: Worktree, message: string): Promise<CommitResult | null> {
    const dir = this.assertWorktreePath(worktree.path);
    if (typeof message !== 'string' || !message.trim())
      throw new ForgePathError('A commit message is required');
    const merging = await this.inTree(worktree.repoKey, dir, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], {
      check: false,
    });
    if (merging.code === 0)
      throw new PullRequestStateError(
        'A merge of the base is in progress: complete or abort the conflict resolution first',
      );
    await this.inTree(worktree.repoKey, dir, ['add', '--all', '--', '.']);
    const staged = parseNumstat(
      (
        await this.inTree(worktree.repoKey, dir, [
          'diff',
          '--cached',
          '--numstat',
          '-z',
          '--no-renames',
          '--no-ext-diff',
          'HEAD',
        ])
      ).stdout,
    );
    if (staged.files.length === 0) return null;
    if (staged.files.length > this.maxChangedFiles) {
      await this.inTree(worktree.repoKey, dir, ['reset', '--quiet']);
      throw new ChangedFilesLimitError(staged.files.length, this.maxChangedFiles);
    }
    await this.inTree(
      worktree.repoKey,
      dir,
      ['-c', 'commit.gpgSign=false', 'commit', '--quiet', '--no-verify', '--cleanup=strip', '-m', message],
      { env: { ...ORCHESTRATOR_IDENTITY } },
    );
    const sha = (await this.inTree(worktree.repoKey, dir, ['rev-parse', 'HEAD'])).stdout.trim();
    return { sha, files: staged.files.length, additions: staged.additions, deletions: staged.deletions };
  }

  async push(worktree: Worktree): Promise<string> {
    const tip = await this.branchTip(worktree.repoKey, worktree.branch);
    if (!tip) throw new PullRequestStateError(`Branch ${worktree.branch} does not exist`);
    return tip;
  }

  async diffStats(repo: ForgeRepository, sha: string): Promise<DiffStats> {
    if (!isObjectId(sha) || !(await this.resolve(repo.repoKey, sha)))
      throw new ForgePathError(`Not a commit of ${repo.repoKey}: ${sha}`);
    return commitStats(this.runner(repo.repoKey), sha);
  }

  async deleteBranch(repo: ForgeRepository, branch: string): Promise<void> {
    assertBranchName(branch);
    if (branch === repo.defaultBranch)
      throw new PullRequestStateError('The default branch cannot be deleted');
    const where = (await this.checkedOut(repo.repoKey)).get(branch);
    if (where)
      throw new PullRequestStateError(
        `Branch ${branch} is checked out in ${where}; remove the worktree first`,
      );
    const tip = await this.branchTip(repo.repoKey, branch);
    if (tip) await this.bare(repo.repoKey, ['update-ref', '-d', `refs/heads/${branch}`, tip]);
  }
}
