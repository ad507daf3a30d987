// The repositories half of the GitHub forge (github-forge.ts adds pull requests, checks and merges):
// the same bare-repository + worktree machinery as the local forge (local-repositories.ts and
// local-conflicts.ts, extended here), but the bare repository is a clone of the GitHub repository and
// branches are pushed back to it.
//
// Layout: `<data dir>/forge/github/<owner>/<repo>.git` (repo key `owner/repo`); workflow worktrees
// under the same worktree root as the local forge's. `refs/heads/<default>` follows GitHub's default
// branch (fetched on baseline/refresh); other remote branches are fetched to `refs/remotes/origin/*`
// when needed; workflow branches are ours and pushed (never forced).
//
// The token: git gets it only through the environment of the one call that talks to GitHub
// (GIT_CONFIG_COUNT/KEY/VALUE setting `http.<web URL>/.extraHeader`), never in argv, a config file, a
// remote URL, a log line, an error message or workflow history; git's stderr is redacted before it is
// thrown. The host is checked by the egress policy before git connects (git resolves the name itself,
// so this check cannot pin the address the way the API calls' connect-time check does).
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Octokit } from '@octokit/rest';
import { assertBranchName, isObjectId } from '../../../domain/forge/branch-name.ts';
import {
  ForgeError,
  ForgePathError,
  ForgePermissionError,
  GitCommandError,
  ProjectRepositoryError,
  PullRequestStateError,
} from '../../../domain/forge/errors.ts';
import type { DiffStats, ForgeProject, ForgeRepository, Worktree } from '../../../domain/forge/types.ts';
import { EgressDeniedError, type EgressGuard } from '../../egress/guard.ts';
import { type GitOptions, git } from '../git.ts';
import { LocalConflictResolution } from '../local-conflicts.ts';
import type { LocalRepositoriesOptions } from '../local-repositories.ts';
import { redact, toForgeError } from './api-errors.ts';
import { guardedFetch } from './guarded-fetch.ts';
import { cloneUrl, type GitHubRepoName, originOf, parseGitHubRemote, parseRepoKey } from './remote-url.ts';

export interface GitHubRepositoriesOptions extends LocalRepositoriesOptions {
  /** REST API base, e.g. https://api.github.com (GitHub Enterprise: https://<host>/api/v3). */
  apiUrl: string;
  /** Web/Git base, e.g. https://github.com: project origins and clone URLs are on it. */
  webUrl: string;
  token: string;
  /** The egress policy every API request and git connection goes through. */
  egress: EgressGuard;
  /** Per API request. */
  requestTimeoutMs?: number;
}

const NETWORK_GIT_TIMEOUT_MS = 600_000;
const silentLog = { debug() {}, info() {}, warn() {}, error() {} };

export class GitHubRepositories extends LocalConflictResolution {
  readonly webUrl: string;
  readonly apiUrl: string;
  protected readonly octokit: Octokit;
  protected readonly egress: EgressGuard;
  readonly #token: string;
  private readonly defaults = new Map<string, string>();

  constructor(opts: GitHubRepositoriesOptions) {
    super(opts);
    if (!opts.token) throw new ForgePermissionError('The GitHub forge needs a token (SVC_GITHUB_TOKEN)', 401);
    this.#token = opts.token;
    this.webUrl = opts.webUrl.replace(/\/+$/, '');
    this.apiUrl = opts.apiUrl.replace(/\/+$/, '');
    this.egress = opts.egress;
    this.octokit = new Octokit({
      auth: opts.token,
      baseUrl: this.apiUrl,
      userAgent: 'svc-forge',
      log: silentLog,
      request: { fetch: guardedFetch(opts.egress, { timeoutMs: opts.requestTimeoutMs ?? 30_000 }) },
    });
    mkdirSync(path.join(this.forgeDir, 'github'), { recursive: true });
  }

  // ---- plumbing -------------------------------------------------------------------------------

  /** The secrets that must never leave in a message. */
  protected get secrets(): string[] {
    return [this.#token];
  }

  /** One API call; its failure becomes a typed, redacted forge error. */
  protected async api<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw toForgeError(err, what, this.secrets);
    }
  }

  protected nameOf(repoKey: string): GitHubRepoName {
    const name = parseRepoKey(repoKey);
    if (!name) throw new ForgePathError(`Not a GitHub repository key: ${repoKey}`);
    return name;
  }

  /** The bare clone of `owner/repo` (the key is validated: it never names another path). */
  override gitDir(repoKey: string): string {
    const { owner, repo } = this.nameOf(repoKey);
    return path.join(this.forgeDir, 'github', owner, `${repo}.git`);
  }

  /** The git environment that authenticates to GitHub, for one call. */
  private authEnv(): Record<string, string> {
    const basic = Buffer.from(`x-access-token:${this.#token}`).toString('base64');
    return {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: `http.${this.webUrl}/.extraheader`,
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    };
  }

  private async checkGitEgress(): Promise<void> {
    const host = new URL(this.webUrl).hostname.replace(/^\[|\]$/g, '');
    try {
      const refusal = this.egress.refusal(host);
      if (refusal !== null) throw new EgressDeniedError(refusal);
      if (!/^[0-9.]+$/.test(host) && !host.includes(':')) await this.egress.resolve(host);
    } catch (err) {
      if (err instanceof EgressDeniedError) throw new ForgePermissionError(`GitHub git: ${err.message}`, 403);
      // not resolvable now: git will say so
    }
  }

  private redactGit(err: unknown): unknown {
    if (err instanceof GitCommandError)
      return new GitCommandError(err.args, err.exitCode, redact(err.stderrTail, this.secrets));
    if (err instanceof Error && !(err instanceof ForgeError)) err.message = redact(err.message, this.secrets);
    return err;
  }

  /** git against the bare clone, talking to GitHub (authenticated through the env only). */
  protected async remoteGit(repoKey: string, args: string[], extra: Partial<GitOptions> = {}) {
    await this.checkGitEgress();
    try {
      return await this.bare(repoKey, args, {
        timeoutMs: Math.max(this.gitTimeoutMs, NETWORK_GIT_TIMEOUT_MS),
        ...extra,
        env: { ...this.authEnv(), ...extra.env },
      });
    } catch (err) {
      throw this.redactGit(err);
    }
  }

  protected remoteUrl(repoKey: string): string {
    return cloneUrl(this.webUrl, this.nameOf(repoKey));
  }

  /** Fetches branches of GitHub: the default branch to refs/heads, others to refs/remotes/origin. */
  protected async fetchBranches(repo: ForgeRepository, branches: string[]): Promise<void> {
    const specs = [...new Set(branches)].map((b) => {
      assertBranchName(b);
      return b === repo.defaultBranch
        ? `+refs/heads/${b}:refs/heads/${b}`
        : `+refs/heads/${b}:refs/remotes/origin/${b}`;
    });
    if (!specs.length) return;
    await this.remoteGit(repo.repoKey, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--update-head-ok',
      '--',
      this.remoteUrl(repo.repoKey),
      ...specs,
    ]);
  }

  /** Makes a commit present locally (fetching it by id from GitHub when it is not). */
  protected async ensureCommit(repoKey: string, sha: string): Promise<void> {
    if (!isObjectId(sha)) throw new ForgePathError(`Not a commit id: ${sha}`);
    if (await this.resolve(repoKey, sha)) return;
    await this.remoteGit(repoKey, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--',
      this.remoteUrl(repoKey),
      sha,
    ]);
  }

  // ---- repositories ---------------------------------------------------------------------------

  /** The GitHub repository of a project (its origin remote), or ProjectRepositoryError. */
  async repositoryOf(project: ForgeProject): Promise<GitHubRepoName> {
    const origin =
      typeof project.path === 'string' && path.isAbsolute(project.path) ? await originOf(project.path) : null;
    const name = origin ? parseGitHubRemote(origin, this.webUrl) : null;
    if (!name)
      throw new ProjectRepositoryError(`The project's origin remote is not a repository on ${this.webUrl}`);
    return name;
  }

  override async ensureRepository(project: ForgeProject): Promise<ForgeRepository> {
    return this.ensureRemote(await this.repositoryOf(project));
  }

  /** Clones `owner/repo` once (bare), and names its default branch (read from GitHub once per process). */
  async ensureRemote(name: GitHubRepoName): Promise<ForgeRepository> {
    const repoKey = `${name.owner}/${name.repo}`;
    let defaultBranch = this.defaults.get(repoKey);
    if (!defaultBranch) {
      const info = await this.api(`read repository ${repoKey}`, () =>
        this.octokit.rest.repos.get({ owner: name.owner, repo: name.repo }),
      );
      defaultBranch = assertBranchName(info.data.default_branch);
      this.defaults.set(repoKey, defaultBranch);
    }
    const gitDir = this.gitDir(repoKey);
    if (!existsSync(path.join(gitDir, 'HEAD'))) {
      await this.checkGitEgress();
      mkdirSync(path.dirname(gitDir), { recursive: true });
      const tmp = `${gitDir}.import-${process.pid}-${Date.now()}`;
      const r = await git(['clone', '--bare', '--quiet', '--no-tags', '--', this.remoteUrl(repoKey), tmp], {
        cwd: path.dirname(gitDir),
        home: this.home,
        timeoutMs: Math.max(this.gitTimeoutMs, NETWORK_GIT_TIMEOUT_MS),
        env: this.authEnv(),
        check: false,
      });
      if (r.code !== 0) {
        rmSync(tmp, { recursive: true, force: true });
        throw new ProjectRepositoryError(
          `Cannot clone ${repoKey} from ${this.webUrl}: ${redact(r.stderr.trim(), this.secrets).slice(-300)}`,
        );
      }
      try {
        renameSync(tmp, gitDir);
      } catch {
        rmSync(tmp, { recursive: true, force: true });
      }
    }
    const repo = { repoKey, defaultBranch };
    if (!(await this.branchTip(repoKey, defaultBranch))) await this.fetchBranches(repo, [defaultBranch]);
    if (!(await this.branchTip(repoKey, defaultBranch)))
      throw new ProjectRepositoryError(`The default branch ${defaultBranch} of ${repoKey} has no commits`);
    return repo;
  }

  /** Brings GitHub's default branch in (GitHub is the source of truth; never diverges here). */
  override async refreshFromProject(
    project: ForgeProject,
  ): Promise<{ status: 'updated' | 'up_to_date' | 'ahead' | 'diverged'; sha: string }> {
    const repo = await this.ensureRepository(project);
    const before = await this.branchTip(repo.repoKey, repo.defaultBranch);
    await this.fetchBranches(repo, [repo.defaultBranch]);
    const after = (await this.branchTip(repo.repoKey, repo.defaultBranch))!;
    return { status: after === before ? 'up_to_date' : 'updated', sha: after };
  }

  /** How the project owner takes merged changes: from GitHub, as usual. */
  override pullCommand(repo: ForgeRepository): string[] {
    return ['git', 'pull', '--ff-only', 'origin', repo.defaultBranch];
  }

  override async baseline(repo: ForgeRepository): Promise<string> {
    await this.fetchBranches(repo, [repo.defaultBranch]);
    return super.baseline(repo);
  }

  /** Pushes the worktree's branch to GitHub (never forced); returns the pushed tip. */
  override async push(worktree: Worktree): Promise<string> {
    const branch = assertBranchName(worktree.branch);
    const tip = await this.branchTip(worktree.repoKey, branch);
    if (!tip) throw new PullRequestStateError(`Branch ${branch} does not exist`);
    await this.remoteGit(worktree.repoKey, [
      'push',
      '--quiet',
      '--no-verify',
      '--',
      this.remoteUrl(worktree.repoKey),
      `refs/heads/${branch}:refs/heads/${branch}`,
    ]);
    await this.bare(worktree.repoKey, ['update-ref', `refs/remotes/origin/${branch}`, tip]);
    return tip;
  }

  override async diffStats(repo: ForgeRepository, sha: string): Promise<DiffStats> {
    await this.ensureCommit(repo.repoKey, sha);
    return super.diffStats(repo, sha);
  }

  /** Deletes the branch here and on GitHub (never the default branch; gone already is fine). */
  override async deleteBranch(repo: ForgeRepository, branch: string): Promise<void> {
    await super.deleteBranch(repo, branch);
    await this.bare(repo.repoKey, ['update-ref', '-d', `refs/remotes/origin/${branch}`], { check: false });
    const { owner, repo: name } = this.nameOf(repo.repoKey);
    try {
      await this.api(`delete branch ${branch}`, () =>
        this.octokit.rest.git.deleteRef({ owner, repo: name, ref: `heads/${branch}` }),
      );
    } catch (err) {
      if (!(err instanceof ForgeError && (err.code === 'forge_not_found' || err.code === 'forge_api')))
        throw err;
    }
  }
}
