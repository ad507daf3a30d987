// The GitHub forge: domain/forge/types.ts `Forge` on GitHub's REST API (Octokit), for projects whose
// origin is a GitHub repository (services/forge/forge-for-project.ts decides). Git work (clone,
// worktrees, orchestrator commits, conflict resolution in the PR's worktree) is the local forge's code
// through github-repositories.ts; this file holds what GitHub owns: pull requests, checks, mergeable
// state, merges, and the issue tracker (github-issues.ts).
//
//   openPullRequest   GET pulls?head= (an open one is reused: idempotent on retry), else POST pulls
//   getPullRequest    GET pulls/{n}             updatePullRequest: PATCH pulls/{n}
//   isBehind          GET compare/{base}...{head} (behind_by)
//   syncWithBase      a local merge of the base into the PR branch (in its worktree when one holds it,
//                     so that tree follows) and a push; a conflict changes nothing
//   runCi             CI runs on GitHub: re-request cancelled check runs, then wait for the head's
//                     check runs and statuses to complete (poll; bounded by forge.ci_timeout_seconds;
//                     none registered within the grace period -> no_ci)
//   checks/latestCi   github-checks.ts (a failed check's log is the repair evidence and fingerprint)
//   mergeability      GET pulls/{n}: `mergeable: null` means GitHub is computing: read again a few
//                     times; mergeable_state -> Mergeability (dirty: conflict files from a local
//                     trial merge; draft/blocked/unknown -> blocked; unstable/has_hooks -> clean:
//                     diagnostic only)
//   merge             PUT pulls/{n}/merge with the observed head sha. 405: the refusal's category
//                     from the evidence re-read (draft -> rule, dirty -> conflict, failing/pending
//                     checks, else rule: review required, protection); 409 head moved -> pending;
//                     401/403/404/422 -> error (fails visibly with GitHub's reason); 429/5xx/network
//                     -> thrown ForgeTransientError (backoff), never a refusal
// Every error message is redacted of the token (api-errors.ts).
import type { components } from '@octokit/openapi-types';
import { assertBranchName } from '../../../domain/forge/branch-name.ts';
import { PullRequestStateError } from '../../../domain/forge/errors.ts';
import type {
  BehindState,
  CheckEvidence,
  CiResult,
  CiRun,
  CommitResult,
  Forge,
  ForgeRepository,
  Mergeability,
  MergeMethod,
  MergeRefusalCategory,
  MergeResult,
  OpenPullRequestInput,
  PullRequest,
  PullRequestDiff,
  RunCiOptions,
  SyncResult,
  Worktree,
} from '../../../domain/forge/types.ts';
import { diffBetween, trialMerge } from '../git-diff.ts';
import { apiMessage, apiStatus, redact, toForgeError } from './api-errors.ts';
import { aggregateStatus, evidenceOf, type GitHubCheck, readCheckLog, readChecks } from './github-checks.ts';
import { GitHubIssues } from './github-issues.ts';
import { GitHubRepositories, type GitHubRepositoriesOptions } from './github-repositories.ts';

export interface GitHubForgeOptions extends GitHubRepositoriesOptions {
  ciTimeoutSeconds?: number;
  diffMaxBytes?: number;
  /** Between reads of check runs while waiting for CI (default 10 s). */
  pollIntervalMs?: number;
  /** No check run or status registered within this time after a push: the repository has no CI. */
  ciRegisterGraceMs?: number;
  /** Reads of a PR while GitHub computes `mergeable` (null), and the pause between them. */
  mergeableReads?: number;
  mergeableDelayMs?: number;
}

type GhPull = Pick<
  components['schemas']['pull-request'],
  | 'id'
  | 'number'
  | 'title'
  | 'body'
  | 'state'
  | 'merged_at'
  | 'merge_commit_sha'
  | 'created_at'
  | 'updated_at'
  | 'draft'
> &
  Partial<Pick<components['schemas']['pull-request'], 'mergeable' | 'mergeable_state'>> & {
    head: { ref: string; sha: string };
    base: { ref: string; sha: string };
  };

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

export class GitHubForge extends GitHubRepositories implements Forge {
  readonly issues: GitHubIssues;
  private readonly ciTimeoutSeconds: number;
  private readonly diffMaxBytes: number;
  private readonly pollIntervalMs: number;
  private readonly ciRegisterGraceMs: number;
  private readonly mergeableReads: number;
  private readonly mergeableDelayMs: number;

  constructor(opts: GitHubForgeOptions) {
    super(opts);
    this.issues = new GitHubIssues(this.octokit, () => this.secrets);
    this.ciTimeoutSeconds = opts.ciTimeoutSeconds ?? 600;
    this.diffMaxBytes = opts.diffMaxBytes ?? 1024 * 1024;
    this.pollIntervalMs = opts.pollIntervalMs ?? 10_000;
    this.ciRegisterGraceMs = opts.ciRegisterGraceMs ?? 60_000;
    this.mergeableReads = opts.mergeableReads ?? 6;
    this.mergeableDelayMs = opts.mergeableDelayMs ?? 1000;
  }

  // ---- pull requests --------------------------------------------------------------------------

  private toPullRequest(repoKey: string, p: GhPull, workflowId: string | null = null): PullRequest {
    return {
      id: Number(p.id),
      repoKey,
      number: p.number,
      workflowId,
      headBranch: p.head.ref,
      baseBranch: p.base.ref,
      baseSha: p.base.sha,
      headSha: p.head.sha,
      title: p.title,
      body: p.body ?? null,
      status: p.merged_at ? 'merged' : p.state === 'closed' ? 'closed' : 'open',
      mergeCommitSha: p.merged_at ? (p.merge_commit_sha ?? null) : null,
      createdAt: new Date(p.created_at),
      updatedAt: new Date(p.updated_at),
      mergedAt: p.merged_at ? new Date(p.merged_at) : null,
      draft: p.draft ?? false,
    };
  }

  private async readPull(repoKey: string, number: number): Promise<GhPull> {
    const { owner, repo } = this.nameOf(repoKey);
    return (
      await this.api(`read pull request #${number}`, () =>
        this.octokit.rest.pulls.get({ owner, repo, pull_number: number }),
      )
    ).data;
  }

  async openPullRequest(input: OpenPullRequestInput): Promise<PullRequest> {
    const { repo } = input;
    const head = assertBranchName(input.head);
    const base = assertBranchName(input.base);
    if (head === base) throw new PullRequestStateError('The head and base branches are the same');
    const title = String(input.title ?? '')
      .trim()
      .slice(0, 1000);
    if (!title) throw new PullRequestStateError('A pull request needs a title');
    const { owner, repo: name } = this.nameOf(repo.repoKey);
    const open = await this.api('list pull requests', () =>
      this.octokit.rest.pulls.list({
        owner,
        repo: name,
        head: `${owner}:${head}`,
        base,
        state: 'open',
        per_page: 1,
      }),
    );
    if (open.data[0]) return this.getPullRequest(repo, open.data[0].number, input.workflowId ?? null);
    const created = await this.api(`open a pull request from ${head}`, () =>
      this.octokit.rest.pulls.create({
        owner,
        repo: name,
        head,
        base,
        title,
        body: input.body == null ? undefined : String(input.body).slice(0, 65_536),
        draft: input.draft ?? false,
      }),
    );
    return this.toPullRequest(repo.repoKey, created.data, input.workflowId ?? null);
  }

  async getPullRequest(
    repo: ForgeRepository,
    number: number,
    workflowId: string | null = null,
  ): Promise<PullRequest> {
    return this.toPullRequest(repo.repoKey, await this.readPull(repo.repoKey, number), workflowId);
  }

  /** Title/body edits (draft state changes are GraphQL-only on GitHub: not here). */
  async updatePullRequest(pr: PullRequest, change: { title?: string; body?: string }): Promise<PullRequest> {
    const { owner, repo } = this.nameOf(pr.repoKey);
    const r = await this.api(`update pull request #${pr.number}`, () =>
      this.octokit.rest.pulls.update({
        owner,
        repo,
        pull_number: pr.number,
        ...(change.title !== undefined ? { title: change.title.slice(0, 1000) } : {}),
        ...(change.body !== undefined ? { body: change.body.slice(0, 65_536) } : {}),
      }),
    );
    return this.toPullRequest(pr.repoKey, r.data, pr.workflowId);
  }

  async closePullRequest(pr: PullRequest): Promise<PullRequest> {
    const { owner, repo } = this.nameOf(pr.repoKey);
    const r = await this.api(`close pull request #${pr.number}`, () =>
      this.octokit.rest.pulls.update({ owner, repo, pull_number: pr.number, state: 'closed' }),
    );
    return this.toPullRequest(pr.repoKey, r.data, pr.workflowId);
  }

  private async openFresh(pr: PullRequest): Promise<PullRequest> {
    const fresh = await this.getPullRequest(
      { repoKey: pr.repoKey, defaultBranch: '' },
      pr.number,
      pr.workflowId,
    );
    if (fresh.status !== 'open')
      throw new PullRequestStateError(`Pull request #${fresh.number} is ${fresh.status}`);
    return fresh;
  }

  /** Fetches the PR's base and head; returns their local shas (the head as GitHub has it). */
  private async fetchPr(pr: PullRequest): Promise<{ base: string; head: string }> {
    const repo = await this.ensureRemote(this.nameOf(pr.repoKey));
    await this.fetchBranches(repo, [pr.baseBranch, pr.headBranch]);
    const ref = (b: string) => (b === repo.defaultBranch ? `refs/heads/${b}` : `refs/remotes/origin/${b}`);
    const base = await this.resolve(pr.repoKey, ref(pr.baseBranch));
    if (!base) throw new PullRequestStateError(`Base branch ${pr.baseBranch} no longer exists`);
    await this.ensureCommit(pr.repoKey, pr.headSha);
    return { base, head: pr.headSha };
  }

  async prDiff(pr: PullRequest): Promise<PullRequestDiff> {
    const fresh = await this.getPullRequest({ repoKey: pr.repoKey, defaultBranch: '' }, pr.number);
    let tips = { base: fresh.baseSha, head: fresh.headSha };
    if (fresh.status === 'open') tips = await this.fetchPr(fresh);
    else {
      await this.ensureCommit(fresh.repoKey, fresh.baseSha);
      await this.ensureCommit(fresh.repoKey, fresh.headSha);
    }
    const { base, head } = tips;
    const run = this.runner(fresh.repoKey);
    const mergeBase = (await run(['merge-base', base, head])).stdout.trim();
    const stats = await diffBetween(run, mergeBase, head);
    const text = await run(
      ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', mergeBase, head],
      { maxOutputBytes: this.diffMaxBytes, truncate: true },
    );
    return { ...stats, diff: text.stdout, truncated: text.truncated, headSha: head, mergeBaseSha: mergeBase };
  }

  async isBehind(pr: PullRequest): Promise<BehindState> {
    const fresh = await this.openFresh(pr);
    const { owner, repo } = this.nameOf(fresh.repoKey);
    const cmp = await this.api('compare head with base', () =>
      this.octokit.rest.repos.compareCommitsWithBasehead({
        owner,
        repo,
        basehead: `${fresh.baseBranch}...${fresh.headSha}`,
        per_page: 1,
      }),
    );
    return {
      behind: cmp.data.behind_by > 0,
      behindBy: cmp.data.behind_by,
      baseSha: cmp.data.base_commit.sha,
      headSha: fresh.headSha,
    };
  }

  // ---- sync and conflicts ---------------------------------------------------------------------

  /** Brings the worktree's branch up to GitHub's head of it (fast-forward only). */
  private async alignWorktree(worktree: Worktree, remoteHead: string): Promise<void> {
    const local = await this.branchTip(worktree.repoKey, worktree.branch);
    if (!local || local === remoteHead) return;
    if (await this.isAncestor(worktree.repoKey, remoteHead, local)) return; // ahead: unpushed work
    if (!(await this.isAncestor(worktree.repoKey, local, remoteHead)))
      throw new PullRequestStateError(
        `Branch ${worktree.branch} has diverged from GitHub's; resolve it by hand`,
      );
    await this.inTree(worktree.repoKey, worktree.path, ['merge', '--ff-only', '--quiet', remoteHead]);
  }

  async syncWithBase(pr: PullRequest): Promise<SyncResult> {
    const fresh = await this.openFresh(pr);
    const { base, head } = await this.fetchPr(fresh);
    if (await this.isAncestor(fresh.repoKey, base, head)) return { status: 'up_to_date', headSha: head };
    const holder = (await this.checkedOut(fresh.repoKey)).get(fresh.headBranch);
    let wt: Worktree;
    let temporary = false;
    if (holder) {
      wt = { repoKey: fresh.repoKey, path: holder, branch: fresh.headBranch, baseSha: base };
      await this.alignWorktree(wt, head);
    } else {
      const local = await this.branchTip(fresh.repoKey, fresh.headBranch);
      if (!local || (await this.isAncestor(fresh.repoKey, local, head)))
        await this.bare(fresh.repoKey, ['update-ref', `refs/heads/${fresh.headBranch}`, head]);
      const dir = `${this.worktreeRoot}/.sync-${process.pid}-${Date.now()}-${fresh.number}`;
      await this.bare(fresh.repoKey, ['worktree', 'add', '--quiet', '--', dir, fresh.headBranch]);
      wt = { repoKey: fresh.repoKey, path: dir, branch: fresh.headBranch, baseSha: base };
      temporary = true;
    }
    try {
      const result = await this.mergeBaseIntoWorktree(
        wt,
        base,
        `Merge ${fresh.baseBranch} into ${fresh.headBranch}`,
      );
      if (result.status === 'conflict') {
        await this.abortConflictResolution(wt);
        return result;
      }
      if (result.status === 'synced') await this.push(wt);
      return result;
    } finally {
      if (temporary) await this.removeTree(fresh.repoKey, wt.path);
    }
  }

  async beginConflictResolution(worktree: Worktree, pr: PullRequest): Promise<SyncResult> {
    const fresh = await this.openFresh(pr);
    if (worktree.repoKey !== fresh.repoKey || worktree.branch !== fresh.headBranch)
      throw new PullRequestStateError(
        `The worktree is not on the head branch of pull request #${fresh.number}`,
      );
    const { base, head } = await this.fetchPr(fresh);
    await this.alignWorktree(worktree, head);
    const result = await this.mergeBaseIntoWorktree(
      worktree,
      base,
      `Merge ${fresh.baseBranch} into ${fresh.headBranch}`,
    );
    if (result.status === 'synced') await this.push(worktree);
    return result;
  }

  /** Commits the agent's resolution and pushes it (the PR on GitHub moves to the resolved head). */
  override async completeConflictResolution(worktree: Worktree, message?: string): Promise<CommitResult> {
    const done = await super.completeConflictResolution(worktree, message);
    await this.push(worktree);
    return done;
  }

  // ---- checks and CI --------------------------------------------------------------------------

  private async headChecks(pr: PullRequest): Promise<GitHubCheck[]> {
    const { owner, repo } = this.nameOf(pr.repoKey);
    return readChecks(this.octokit, owner, repo, pr.headSha, this.secrets);
  }

  private async toCiRun(pr: PullRequest, checks: GitHubCheck[], withLog: boolean): Promise<CiRun> {
    const status = aggregateStatus(checks);
    let logTail: string | null = null;
    const failed = checks.find((c) => c.state === 'failed');
    if (failed && withLog) {
      const { owner, repo } = this.nameOf(pr.repoKey);
      logTail = await readCheckLog(this.octokit, owner, repo, failed, this.secrets);
    }
    const started = checks
      .map((c) => c.startedAt)
      .filter((s): s is string => !!s)
      .sort();
    const finished = checks
      .map((c) => c.completedAt)
      .filter((s): s is string => !!s)
      .sort();
    const done = status !== 'running';
    return {
      id: checks.find((c) => c.id !== null)?.id ?? 0,
      pullRequestId: pr.id,
      headSha: pr.headSha,
      command: checks.map((c) => c.name).join(', '),
      status,
      exitCode: null,
      logTail,
      startedAt: started[0] ? new Date(started[0]) : null,
      finishedAt: done && finished.length ? new Date(finished[finished.length - 1]!) : null,
    };
  }

  async runCi(pr: PullRequest, opts: RunCiOptions = {}): Promise<CiResult> {
    const fresh = await this.openFresh(pr);
    const { owner, repo } = this.nameOf(fresh.repoKey);
    const start = Date.now();
    const deadline = start + (opts.timeoutSeconds ?? this.ciTimeoutSeconds) * 1000;
    let checks = await this.headChecks(fresh);
    // A cancelled check is not a code failure: ask GitHub to run it again, then wait for it.
    for (const c of checks)
      if (c.state === 'cancelled' && c.id !== null)
        await this.api(`re-run check ${c.name}`, () =>
          this.octokit.rest.checks.rerequestRun({ owner, repo, check_run_id: c.id! }),
        );
    for (;;) {
      checks = await this.headChecks(fresh);
      if (!checks.length && Date.now() - start >= this.ciRegisterGraceMs)
        return {
          status: 'no_ci',
          headSha: fresh.headSha,
          reason: 'no check run or commit status was reported for the head on GitHub',
        };
      const settled = checks.length > 0 && !checks.some((c) => c.state === 'pending');
      if (settled || opts.signal?.aborted || Date.now() >= deadline) {
        if (!checks.length)
          return { status: 'no_ci', headSha: fresh.headSha, reason: 'no check reported yet' };
        try {
          return await this.toCiRun(fresh, checks, true);
        } catch (err) {
          // The log is evidence for repair (latestCi); the run's result stands without it.
          const run = await this.toCiRun(fresh, checks, false);
          return { ...run, logTail: `[svc] ${redact((err as Error).message, this.secrets)}\n` };
        }
      }
      await sleep(this.pollIntervalMs, opts.signal);
    }
  }

  /** The head's checks as one run, with the failed check's log (CiEvidenceInsufficientError if unreadable). */
  async latestCi(pr: PullRequest): Promise<CiRun | null> {
    const fresh = await this.getPullRequest({ repoKey: pr.repoKey, defaultBranch: '' }, pr.number);
    const checks = await this.headChecks(fresh);
    return checks.length ? this.toCiRun(fresh, checks, true) : null;
  }

  async checks(pr: PullRequest): Promise<CheckEvidence[]> {
    const fresh = await this.getPullRequest({ repoKey: pr.repoKey, defaultBranch: '' }, pr.number);
    if (fresh.status !== 'open') return [];
    const { owner, repo } = this.nameOf(fresh.repoKey);
    return evidenceOf(this.octokit, owner, repo, await this.headChecks(fresh), this.secrets);
  }

  // ---- mergeability and merge -----------------------------------------------------------------

  async mergeability(pr: PullRequest): Promise<Mergeability> {
    let p = await this.readPull(pr.repoKey, pr.number);
    for (let i = 1; i < this.mergeableReads && p.state === 'open' && (p.mergeable ?? null) === null; i++) {
      await sleep(this.mergeableDelayMs);
      p = await this.readPull(pr.repoKey, pr.number);
    }
    const base = {
      headSha: p.head.sha,
      baseSha: p.base.sha,
      conflictFiles: [] as string[],
      requiredCheck: null,
    };
    if (p.state !== 'open')
      return { ...base, state: 'blocked', reason: `pull request is ${p.merged_at ? 'merged' : 'closed'}` };
    const raw = (p.mergeable ?? null) === null ? 'unknown' : (p.mergeable_state ?? 'unknown');
    switch (raw) {
      case 'dirty': {
        const fresh = this.toPullRequest(pr.repoKey, p);
        const tips = await this.fetchPr(fresh);
        const trial = await trialMerge(this.runner(pr.repoKey), tips.base, tips.head);
        const files = trial.clean ? [] : trial.files;
        return {
          ...base,
          state: 'dirty',
          reason: files.length
            ? `merge conflict in ${files.join(', ')}`
            : 'GitHub reports a merge conflict (dirty)',
          conflictFiles: files,
        };
      }
      case 'behind':
        return {
          ...base,
          state: 'behind',
          reason: `head is behind ${p.base.ref} (required to be up to date)`,
        };
      case 'clean':
        return { ...base, state: 'clean', reason: 'mergeable' };
      case 'unstable':
      case 'has_hooks':
        return { ...base, state: 'clean', reason: `mergeable (GitHub state ${raw}: diagnostic only)` };
      case 'draft':
        return { ...base, state: 'blocked', reason: 'pull request is a draft' };
      case 'blocked':
        return { ...base, state: 'blocked', reason: 'blocked by branch protection (checks or reviews)' };
      default:
        return { ...base, state: 'blocked', reason: `GitHub has not computed mergeability (${raw})` };
    }
  }

  async merge(pr: PullRequest, opts: { method: MergeMethod; message?: string }): Promise<MergeResult> {
    const fresh = await this.getPullRequest(
      { repoKey: pr.repoKey, defaultBranch: '' },
      pr.number,
      pr.workflowId,
    );
    const refuse = (
      category: MergeRefusalCategory,
      reason: string,
      m: Mergeability | null = null,
    ): MergeResult => ({
      merged: false,
      category,
      reason: redact(reason, this.secrets),
      mergeability: m,
    });
    if (fresh.status !== 'open') return refuse('rule', `pull request is ${fresh.status}`);
    const { owner, repo } = this.nameOf(fresh.repoKey);
    const title = opts.message?.trim().split('\n')[0]?.slice(0, 250);
    try {
      const r = await this.octokit.rest.pulls.merge({
        owner,
        repo,
        pull_number: fresh.number,
        sha: fresh.headSha,
        merge_method: 'merge',
        ...(title ? { commit_title: title } : {}),
      });
      return { merged: true, sha: r.data.sha, method: opts.method };
    } catch (err) {
      const status = apiStatus(err);
      const said = `GitHub ${status}: ${apiMessage(err)}`;
      if (status === null || status === 429 || status >= 500) throw toForgeError(err, 'merge', this.secrets);
      if (status === 409)
        return refuse('pending', `the head moved while merging (${said}): re-read and wait`);
      if (status !== 405) return refuse('error', said);
      // 405: GitHub refused by a repository rule; the evidence says which.
      const m = await this.mergeability(fresh).catch(() => null);
      const now = await this.readPull(fresh.repoKey, fresh.number).catch(() => null);
      if (now?.draft) return refuse('rule', `pull request is a draft (${said})`, m);
      if (m?.state === 'dirty') return refuse('conflict', `${m.reason} (${said})`, m);
      const checks = await this.headChecks(fresh).catch(() => [] as GitHubCheck[]);
      if (checks.some((c) => c.state === 'failed')) return refuse('failing', said, m);
      if (checks.some((c) => c.state === 'pending' || c.state === 'cancelled'))
        return refuse('pending', said, m);
      return refuse('rule', said, m);
    }
  }
}
