// The local forge: the first implementation of domain/forge/types.ts `Forge`, entirely on this server.
// Repositories, worktrees, commits and branches are local-repositories.ts (this class extends it);
// this file holds pull requests, CI and merges. Pull requests and CI runs are rows
// (db/repositories/forge/*), numbered per repository (repo key `local:<project id>`).
//
// Repository rules of the local forge (merge refuses otherwise, see merge()):
//   - the PR must be open, its head branch must exist;
//   - no conflict between head and base (`dirty` -> refusal `conflict`);
//   - when the base branch declares CI (local-ci.ts; else when the head adds one), its latest run on
//     the head sha must be `passed` (failed/error -> `failing`; queued/running/cancelled/none yet ->
//     `pending`); the base's declaration is the one that runs, so a change cannot drop or weaken its
//     own check;
//   - branch protection declared by the base (`.svc/branch-protection.json`, domain/forge/
//     protection.ts): a draft PR, missing approvals (reviewPullRequest records them), a required check
//     the repository does not declare, or an invalid protection file -> refusal `rule` naming the
//     requirement, mergeability `blocked`; setDraft / reviewPullRequest are the ways to meet it;
//   - method `ff` needs the base to be an ancestor of the head (else refusal `rule`); method `merge`
//     always writes a merge commit (base first parent, head second), like GitHub's merge method.

import type { SandboxMode } from '../../agent/sandbox.ts';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { forgeCiRunsRepository } from '../../db/repositories/forge/ci-runs.ts';
import { forgePullRequestsRepository } from '../../db/repositories/forge/pull-requests.ts';
import { forgeReviewsRepository, type ReviewState } from '../../db/repositories/forge/reviews.ts';
import { assertBranchName } from '../../domain/forge/branch-name.ts';
import {
  GitCommandError,
  PullRequestNotFoundError,
  PullRequestStateError,
} from '../../domain/forge/errors.ts';
import { failureFingerprint } from '../../domain/forge/fingerprint.ts';
import { checkStateOfCi } from '../../domain/forge/merge-decision.ts';
import { PROTECTION_FILE, parseBranchProtection, unmetRequirement } from '../../domain/forge/protection.ts';
import type {
  BehindState,
  CheckEvidence,
  CiResult,
  CiRun,
  Forge,
  ForgeRepository,
  Mergeability,
  MergeMethod,
  MergeResult,
  OpenPullRequestInput,
  PullRequest,
  PullRequestDiff,
  RunCiOptions,
  SyncResult,
  Worktree,
} from '../../domain/forge/types.ts';
import { decideIsolation, type IsolationDecision } from '../autonomous/runner/isolation/decide.ts';
import { nulFields, ORCHESTRATOR_IDENTITY } from './git.ts';
import { diffBetween, trialMerge } from './git-diff.ts';
import { type CiDeclaration, parseCiDeclaration, runCiCommand } from './local-ci.ts';
import { LocalConflictResolution } from './local-conflicts.ts';
import type { LocalRepositoriesOptions } from './local-repositories.ts';
import { nodeRuntimeFor } from './runtimes.ts';

export { DEFAULT_MAX_CHANGED_FILES, isInside } from './local-repositories.ts';
export const DEFAULT_CI_TIMEOUT_SECONDS = 600;
export const DEFAULT_DIFF_MAX_BYTES = 1024 * 1024;
/** PR titles and bodies are cut here (they come from agent output). */
export const MAX_PR_TITLE_CHARS = 1000;
export const MAX_PR_BODY_CHARS = 65_536;
/** The name of the local forge's one required check (the declared CI). */
export const CI_CHECK_NAME = 'ci';

export interface LocalForgeOptions extends LocalRepositoriesOptions {
  database: DatabaseHandle;
  ciTimeoutSeconds?: number;
  diffMaxBytes?: number;
  /** Installed runtimes for repository-declared versions (SVC_RUNTIMES_DIR; services/forge/runtimes.ts). */
  runtimesDir?: string | null;
  /** The agent isolation decision CI follows (services/autonomous/runner/isolation/decide.ts), per run. */
  agentIsolation?: () => IsolationDecision;
  /** The sandbox switch for CI (SVC_SANDBOX; default on). */
  sandbox?: SandboxMode;
}

export class LocalForge extends LocalConflictResolution implements Forge, ProtectionForge {
  private readonly prs;
  private readonly ciRuns;
  private readonly reviews;
  private readonly ciTimeoutSeconds: number;
  private readonly diffMaxBytes: number;
  readonly runtimesDir: string | null;
  private readonly agentIsolation: (() => IsolationDecision) | null;
  private readonly sandbox: SandboxMode;

  constructor(opts: LocalForgeOptions) {
    super(opts);
    this.prs = forgePullRequestsRepository(opts.database.sql);
    this.ciRuns = forgeCiRunsRepository(opts.database.sql);
    this.reviews = forgeReviewsRepository(opts.database.sql);
    this.ciTimeoutSeconds = opts.ciTimeoutSeconds ?? DEFAULT_CI_TIMEOUT_SECONDS;
    this.diffMaxBytes = opts.diffMaxBytes ?? DEFAULT_DIFF_MAX_BYTES;
    this.runtimesDir = opts.runtimesDir ?? null;
    this.agentIsolation = opts.agentIsolation ?? null;
    this.sandbox = opts.sandbox ?? 'on';
  }

  // ---- pull requests --------------------------------------------------------------------------

  async openPullRequest(input: OpenPullRequestInput): Promise<PullRequest> {
    const { repo } = input;
    const head = assertBranchName(input.head);
    const base = assertBranchName(input.base);
    if (head === base) throw new PullRequestStateError('The head and base branches are the same');
    const title = String(input.title ?? '').trim();
    if (!title) throw new PullRequestStateError('A pull request needs a title');
    const headSha = await this.branchTip(repo.repoKey, head);
    if (!headSha) throw new PullRequestStateError(`Head branch ${head} does not exist`);
    const baseSha = await this.branchTip(repo.repoKey, base);
    if (!baseSha) throw new PullRequestStateError(`Base branch ${base} does not exist`);
    if (await this.prs.openFor(repo.repoKey, head, base))
      throw new PullRequestStateError(`A pull request from ${head} into ${base} is already open`);
    const created = await this.prs.insert({
      repoKey: repo.repoKey,
      workflowId: input.workflowId ?? null,
      headBranch: head,
      baseBranch: base,
      baseSha,
      headSha,
      title: title.slice(0, MAX_PR_TITLE_CHARS),
      body: input.body == null ? null : String(input.body).slice(0, MAX_PR_BODY_CHARS),
      draft: input.draft === true,
    });
    if (created === 'duplicate')
      throw new PullRequestStateError(`A pull request from ${head} into ${base} is already open`);
    return created;
  }

  async getPullRequest(repo: ForgeRepository, number: number): Promise<PullRequest> {
    const pr = await this.prs.byNumber(repo.repoKey, number);
    if (!pr) throw new PullRequestNotFoundError(repo.repoKey, number);
    return this.refresh(pr);
  }

  /** The record with the head sha of its branch (open PRs; merged/closed ones keep their shas). */
  private async refresh(pr: PullRequest): Promise<PullRequest> {
    const current = (await this.prs.byId(pr.id)) ?? pr;
    if (current.status !== 'open') return current;
    const tip = await this.branchTip(current.repoKey, current.headBranch);
    if (tip && tip !== current.headSha) {
      await this.prs.setShas(current.id, { headSha: tip });
      return { ...current, headSha: tip };
    }
    return current;
  }

  private async openTips(pr: PullRequest): Promise<{ pr: PullRequest; head: string; base: string }> {
    const fresh = await this.refresh(pr);
    if (fresh.status !== 'open')
      throw new PullRequestStateError(`Pull request #${fresh.number} is ${fresh.status}`);
    const head = await this.branchTip(fresh.repoKey, fresh.headBranch);
    if (!head) throw new PullRequestStateError(`Head branch ${fresh.headBranch} no longer exists`);
    const base = await this.branchTip(fresh.repoKey, fresh.baseBranch);
    if (!base) throw new PullRequestStateError(`Base branch ${fresh.baseBranch} no longer exists`);
    return { pr: fresh, head, base };
  }

  async prDiff(pr: PullRequest): Promise<PullRequestDiff> {
    const fresh = await this.refresh(pr);
    const run = this.runner(fresh.repoKey);
    const baseTip =
      fresh.status === 'open'
        ? ((await this.branchTip(fresh.repoKey, fresh.baseBranch)) ?? fresh.baseSha)
        : fresh.baseSha;
    const mergeBase = (await run(['merge-base', baseTip, fresh.headSha])).stdout.trim();
    const stats = await diffBetween(run, mergeBase, fresh.headSha);
    const text = await run(
      ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', mergeBase, fresh.headSha],
      { maxOutputBytes: this.diffMaxBytes, truncate: true },
    );
    return {
      ...stats,
      diff: text.stdout,
      truncated: text.truncated,
      headSha: fresh.headSha,
      mergeBaseSha: mergeBase,
    };
  }

  async isBehind(pr: PullRequest): Promise<BehindState> {
    const { head, base } = await this.openTips(pr);
    const count = Number(
      (await this.bare(pr.repoKey, ['rev-list', '--count', `${head}..${base}`])).stdout.trim(),
    );
    return { behind: count > 0, behindBy: count, baseSha: base, headSha: head };
  }

  async syncWithBase(pr: PullRequest): Promise<SyncResult> {
    const { pr: fresh, head, base } = await this.openTips(pr);
    if (await this.isAncestor(fresh.repoKey, base, head)) return { status: 'up_to_date', headSha: head };
    const dir = this.scratchPath('sync', `pr${fresh.id}`);
    await this.bare(fresh.repoKey, ['worktree', 'add', '--quiet', '--detach', '--', dir, head]);
    try {
      const merged = await this.inTree(
        fresh.repoKey,
        dir,
        [
          '-c',
          'commit.gpgSign=false',
          'merge',
          '--no-ff',
          '--no-edit',
          '--no-verify',
          '-m',
          `Merge ${fresh.baseBranch} into ${fresh.headBranch}`,
          base,
        ],
        { env: { ...ORCHESTRATOR_IDENTITY }, check: false },
      );
      if (merged.code !== 0) {
        const files = nulFields(
          (
            await this.inTree(fresh.repoKey, dir, ['diff', '--name-only', '-z', '--diff-filter=U'], {
              check: false,
            })
          ).stdout,
        );
        await this.inTree(fresh.repoKey, dir, ['merge', '--abort'], { check: false });
        if (!files.length) throw new GitCommandError(['merge'], merged.code, merged.stderr);
        return { status: 'conflict', files };
      }
      const next = (await this.inTree(fresh.repoKey, dir, ['rev-parse', 'HEAD'])).stdout.trim();
      // Move the PR branch: through its worktree when one has it checked out (so that tree follows,
      // and git refuses if it holds changes that would be overwritten), else compare-and-swap the ref.
      const holder = (await this.checkedOut(fresh.repoKey)).get(fresh.headBranch);
      if (holder) await this.inTree(fresh.repoKey, holder, ['merge', '--ff-only', '--quiet', next]);
      else await this.bare(fresh.repoKey, ['update-ref', `refs/heads/${fresh.headBranch}`, next, head]);
      await this.prs.setShas(fresh.id, { headSha: next, baseSha: base });
      return { status: 'synced', headSha: next, previousHeadSha: head };
    } finally {
      await this.removeTree(fresh.repoKey, dir);
    }
  }

  /** Starts merging the PR's base into its worktree (conflicts are left for the agent; see local-conflicts.ts). */
  async beginConflictResolution(worktree: Worktree, pr: PullRequest): Promise<SyncResult> {
    const { pr: fresh, base } = await this.openTips(pr);
    if (worktree.repoKey !== fresh.repoKey || worktree.branch !== fresh.headBranch)
      throw new PullRequestStateError(
        `The worktree is not on the head branch of pull request #${fresh.number}`,
      );
    const result = await this.mergeBaseIntoWorktree(
      worktree,
      base,
      `Merge ${fresh.baseBranch} into ${fresh.headBranch}`,
    );
    if (result.status === 'synced')
      await this.prs.setShas(fresh.id, { headSha: result.headSha, baseSha: base });
    return result;
  }

  async closePullRequest(pr: PullRequest): Promise<PullRequest> {
    await this.prs.markClosed(pr.id);
    return (await this.prs.byId(pr.id))!;
  }

  // ---- CI -------------------------------------------------------------------------------------

  /**
   * The CI a PR must pass. The base branch decides first: what the protected branch declares is
   * required and its command is what runs (on the head's code), so a change cannot drop or weaken the
   * check by editing `.svc/ci` or package.json. Only when the base declares nothing does a CI the head
   * adds apply.
   */
  private async ciDeclaration(repoKey: string, baseSha: string, headSha: string): Promise<CiDeclaration> {
    const at = async (sha: string) =>
      parseCiDeclaration(
        await this.fileAt(repoKey, sha, '.svc/ci'),
        await this.fileAt(repoKey, sha, 'package.json'),
      );
    const fromBase = await at(baseSha);
    return fromBase.kind === 'none' ? at(headSha) : fromBase;
  }

  async runCi(pr: PullRequest, opts: RunCiOptions = {}): Promise<CiResult> {
    const { pr: fresh, head, base } = await this.openTips(pr);
    const decl = await this.ciDeclaration(fresh.repoKey, base, head);
    if (decl.kind === 'none') return { status: 'no_ci', headSha: head, reason: decl.reason };
    const command = decl.kind === 'command' ? decl.argv.join(' ') : `(${decl.source})`;
    const run = await this.ciRuns.insertQueued(fresh.id, head, command);
    if (decl.kind === 'invalid')
      return this.ciRuns.finish(run.id, {
        status: 'error',
        exitCode: null,
        logTail: `[svc] ${decl.reason}\n`,
        at: new Date(),
      });
    const dir = this.scratchPath('ci', `run${run.id}`);
    try {
      await this.bare(fresh.repoKey, ['worktree', 'add', '--quiet', '--detach', '--', dir, head]);
      const runtime = nodeRuntimeFor(
        {
          nvmrc: await this.fileAt(fresh.repoKey, head, '.nvmrc'),
          toolVersions: await this.fileAt(fresh.repoKey, head, '.tool-versions'),
          packageJson: await this.fileAt(fresh.repoKey, head, 'package.json'),
        },
        this.runtimesDir,
      );
      // CI runs repository code: as the agent account when the runner isolates agents (issue 15).
      const isolation = this.agentIsolation?.() ?? null;
      if (isolation?.kind === 'refused') throw new Error(isolation.reason);
      const result = await runCiCommand({
        agent: isolation?.kind === 'isolated' ? isolation : null,
        sandbox: this.sandbox,
        pathPrefix: runtime.pathPrefix,
        notes: runtime.note ? [runtime.note] : [],
        argv: decl.argv,
        cwd: dir,
        scratchDir: `${dir}.scratch`,
        timeoutMs: (opts.timeoutSeconds ?? this.ciTimeoutSeconds) * 1000,
        signal: opts.signal,
        onStart: () => void this.ciRuns.markRunning(run.id, new Date()).catch(() => undefined),
      });
      return await this.ciRuns.finish(run.id, { ...result, at: new Date() });
    } catch (err) {
      await this.ciRuns.finish(run.id, {
        status: 'error',
        exitCode: null,
        logTail: `[svc] CI could not run: ${(err as Error).message}\n`,
        at: new Date(),
      });
      throw err;
    } finally {
      await this.removeTree(fresh.repoKey, dir);
    }
  }

  async latestCi(pr: PullRequest): Promise<CiRun | null> {
    const fresh = await this.refresh(pr);
    return (await this.ciRuns.latestFor(fresh.id, fresh.headSha)) ?? null;
  }

  async checks(pr: PullRequest): Promise<CheckEvidence[]> {
    const fresh = await this.refresh(pr);
    if (fresh.status !== 'open') return [];
    const head = await this.branchTip(fresh.repoKey, fresh.headBranch);
    const base = await this.branchTip(fresh.repoKey, fresh.baseBranch);
    if (!head || !base) return [];
    if ((await this.ciDeclaration(fresh.repoKey, base, head)).kind === 'none') return [];
    const latest = await this.ciRuns.latestFor(fresh.id, head);
    const state = checkStateOfCi(latest?.status ?? 'missing');
    return [
      state === 'failed'
        ? {
            name: CI_CHECK_NAME,
            state,
            fingerprint: failureFingerprint(CI_CHECK_NAME, latest!.logTail, latest!.exitCode),
          }
        : { name: CI_CHECK_NAME, state },
    ];
  }

  async ciRunsOf(pr: PullRequest): Promise<CiRun[]> {
    return this.ciRuns.listFor(pr.id);
  }

  // ---- mergeability and merge -----------------------------------------------------------------

  async mergeability(pr: PullRequest): Promise<Mergeability> {
    const fresh = await this.refresh(pr);
    const empty = { headSha: fresh.headSha, baseSha: fresh.baseSha, conflictFiles: [], requiredCheck: null };
    if (fresh.status !== 'open')
      return { ...empty, state: 'blocked', reason: `pull request is ${fresh.status}` };
    const head = await this.branchTip(fresh.repoKey, fresh.headBranch);
    const base = await this.branchTip(fresh.repoKey, fresh.baseBranch);
    if (!head || !base)
      return { ...empty, state: 'blocked', reason: `${head ? 'base' : 'head'} branch no longer exists` };
    const decl = await this.ciDeclaration(fresh.repoKey, base, head);
    let requiredCheck: Mergeability['requiredCheck'] = null;
    if (decl.kind !== 'none') {
      const latest = await this.ciRuns.latestFor(fresh.id, head);
      requiredCheck = { name: CI_CHECK_NAME, status: latest?.status ?? 'missing' };
    }
    const base_ = { headSha: head, baseSha: base, requiredCheck };
    const trial = await trialMerge(this.runner(fresh.repoKey), base, head);
    if (!trial.clean)
      return {
        ...base_,
        state: 'dirty',
        reason: `merge conflict in ${trial.files.join(', ')}`,
        conflictFiles: trial.files,
      };
    if (requiredCheck && requiredCheck.status !== 'passed')
      return {
        ...base_,
        state: 'blocked',
        reason: `required check ${CI_CHECK_NAME} is ${requiredCheck.status} at ${head.slice(0, 12)}`,
        conflictFiles: [],
      };
    const unmet = await this.unmetProtection(fresh, base, head, decl.kind !== 'none');
    if (unmet) return { ...base_, state: 'blocked', reason: unmet, conflictFiles: [] };
    if (!(await this.isAncestor(fresh.repoKey, base, head)))
      return { ...base_, state: 'behind', reason: `head is behind ${fresh.baseBranch}`, conflictFiles: [] };
    return { ...base_, state: 'clean', reason: 'mergeable', conflictFiles: [] };
  }

  /** The first unmet branch-protection requirement of the base's declaration (null: none). */
  private async unmetProtection(
    pr: PullRequest,
    base: string,
    head: string,
    ciDeclared: boolean,
  ): Promise<string | null> {
    const decl = parseBranchProtection(await this.fileAt(pr.repoKey, base, PROTECTION_FILE), [CI_CHECK_NAME]);
    if (decl.kind === 'none' && !pr.draft) return null;
    const approvals = (await this.reviews.listFor(pr.id)).filter((r) => r.state === 'approved');
    return unmetRequirement(decl, {
      draft: pr.draft === true,
      headSha: head,
      declaredChecks: ciDeclared ? [CI_CHECK_NAME] : [],
      approvals,
    });
  }

  async reviewPullRequest(pr: PullRequest, review: { reviewer: string; state: ReviewState }): Promise<void> {
    const { pr: fresh, head } = await this.openTips(pr);
    const reviewer = String(review.reviewer ?? '').trim();
    if (!reviewer || reviewer.length > 255) throw new PullRequestStateError('A review needs a reviewer name');
    if (review.state !== 'approved' && review.state !== 'changes_requested')
      throw new PullRequestStateError('A review is approved or changes_requested');
    await this.reviews.record({ pullRequestId: fresh.id, reviewer, state: review.state, headSha: head });
  }

  async setDraft(pr: PullRequest, draft: boolean): Promise<PullRequest> {
    const { pr: fresh } = await this.openTips(pr);
    if (!(await this.prs.setDraft(fresh.id, draft)))
      throw new PullRequestStateError(`Pull request #${fresh.number} is no longer open`);
    return this.refresh(fresh);
  }

  async merge(pr: PullRequest, opts: { method: MergeMethod; message?: string }): Promise<MergeResult> {
    const m = await this.mergeability(pr);
    const refuse = (category: 'failing' | 'pending' | 'conflict' | 'rule', reason: string): MergeResult => ({
      merged: false,
      category,
      reason,
      mergeability: m,
    });
    const fresh = (await this.prs.byId(pr.id))!;
    if (fresh.status !== 'open' || m.reason.endsWith('no longer exists')) return refuse('rule', m.reason);
    if (m.state === 'dirty') return refuse('conflict', m.reason);
    const check = m.requiredCheck;
    if (check && check.status !== 'passed') {
      if (check.status === 'failed' || check.status === 'error') return refuse('failing', m.reason);
      return refuse(
        'pending',
        check.status === 'cancelled' ? `${m.reason} (cancelled: not a code failure; run CI again)` : m.reason,
      );
    }
    // Branch protection (mergeability already read it: a `blocked` state past the checks is a rule).
    if (m.state === 'blocked') return refuse('rule', m.reason);
    const { headSha: head, baseSha: base } = m;
    let sha: string;
    if (opts.method === 'ff') {
      if (!(await this.isAncestor(fresh.repoKey, base, head)))
        return refuse('rule', `fast-forward impossible: ${fresh.headBranch} is behind ${fresh.baseBranch}`);
      sha = head;
    } else {
      const trial = await trialMerge(this.runner(fresh.repoKey), base, head);
      if (!trial.clean) return refuse('conflict', `merge conflict in ${trial.files.join(', ')}`);
      const message =
        opts.message?.trim() ||
        `Merge pull request #${fresh.number} from ${fresh.headBranch}\n\n${fresh.title}`;
      sha = (
        await this.bare(fresh.repoKey, ['commit-tree', trial.tree, '-p', base, '-p', head, '-F', '-'], {
          env: { ...ORCHESTRATOR_IDENTITY },
          input: message,
        })
      ).stdout.trim();
    }
    // Compare-and-swap: a base that moved since it was read is a refusal, never an overwrite.
    const cas = await this.bare(fresh.repoKey, ['update-ref', `refs/heads/${fresh.baseBranch}`, sha, base], {
      check: false,
    });
    if (cas.code !== 0) {
      // The base really moved: the next observation finds the head behind (rule 1 syncs). It did not
      // (a ref lock held by another git process): a transient Git error, retried, never a rule pause.
      if ((await this.resolve(fresh.repoKey, `refs/heads/${fresh.baseBranch}`)) === base)
        throw new GitCommandError(['update-ref', `refs/heads/${fresh.baseBranch}`], cas.code, cas.stderr);
      return refuse('rule', `${fresh.baseBranch} moved during the merge; re-read and try again`);
    }
    await this.prs.markMerged(fresh.id, {
      mergeCommitSha: sha,
      headSha: head,
      baseSha: base,
      at: new Date(),
    });
    return { merged: true, sha, method: opts.method };
  }
}

export interface ProtectionForge {
  /** Records a review of the PR's current head (a later review by the same reviewer replaces it). */
  reviewPullRequest(pr: PullRequest, review: { reviewer: string; state: ReviewState }): Promise<void>;
  /** Marks an open PR draft (merges refused) or ready for review. */
  setDraft(pr: PullRequest, draft: boolean): Promise<PullRequest>;
}

/** The local forge as the settings configure it (CI timeout, diff cap, changed-files limit). */
export function localForgeFromSettings(
  settings: Pick<Settings, 'dataDir' | 'forge' | 'AUTONOMOUS_MAX_CHANGED_FILES'> & {
    SVC_RUNTIMES_DIR?: string | undefined;
    SVC_SANDBOX?: SandboxMode;
  },
  database: DatabaseHandle,
  opts: { worktreeRoot?: string } = {},
): LocalForge {
  return new LocalForge({
    dataDir: settings.dataDir,
    database,
    worktreeRoot: opts.worktreeRoot,
    maxChangedFiles: settings.AUTONOMOUS_MAX_CHANGED_FILES,
    ciTimeoutSeconds: settings.forge.ci_timeout_seconds,
    diffMaxBytes: settings.forge.diff_max_bytes,
    runtimesDir: settings.SVC_RUNTIMES_DIR ?? null,
    sandbox: settings.SVC_SANDBOX ?? 'on',
    // Full settings carry the agent isolation switches (a partial settings object keeps CI as it was).
    ...('SVC_AUTONOMOUS_ISOLATION' in settings && 'autonomous' in settings
      ? { agentIsolation: () => decideIsolation(settings as unknown as Settings) }
      : {}),
  });
}
