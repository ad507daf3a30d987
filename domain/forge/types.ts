// The Forge interface: everything the autonomous workflow's activities do with a code host, so the
// workflow is written once and runs on the local forge (services/forge/local-forge.ts: a bare Git
// repository per project on this server, PR and CI records in our database) or on GitHub (issue 15:
// an Octokit adapter, same interface). Types only; no I/O.
//
// Who does what (spec document 2, "Limits", execution isolation): the agent only edits files in a
// worktree. Commit, push, PR, sync, CI and merge are orchestrator operations, i.e. calls on this
// interface from activities, never from the agent's process.
//
// Typical use by the workflow (one activity per call; every argument and result is small and
// serialisable, carries ids and shas, never secrets, so it may sit in workflow history):
//   const repo = await forge.ensureRepository({id, path})          // import once, then reuse
//   const base = await forge.baseline(repo)                        // pin: a batch shares one sha
//   const wt   = await forge.createWorktree(repo, {branch: workflowBranch(wfId), baseSha: base, path})
//   ... agent edits wt.path ...
//   const c    = await forge.commitAll(wt, 'message')              // null: nothing changed
//   await forge.push(wt)                                           // local forge: already there
//   const pr   = await forge.openPullRequest({repo, head: wt.branch, base: repo.defaultBranch, ...})
//   loop (merge stage, domain/forge/merge-decision.ts):
//     observe: services/forge/observe.ts observeMerge(forge, pr, {refusal, repairedFingerprints, ...})
//              (isBehind, checks, mergeability; refusalOf(merge result) for the last refusal)
//     decideMergeStep(observation) -> sync_and_wait | requery | ci_repair | wait | resolve_conflict |
//                                     pause_for_rules | fail_visible | merge
//     act: syncWithBase(pr) then runCi(pr); CI repair by the agent in its worktree, then commitAll +
//          push; conflicts: beginConflictResolution(wt, pr) -> agent edits ->
//          completeConflictResolution(wt) (or abort); runCi again after a cancelled run; merge(pr, ...)
// Failures: forge errors are typed (domain/forge/errors.ts); classifyForgeError
// (domain/forge/error-class.ts) maps them to the autonomous error classes inside the activity.
//   await forge.removeWorktree(wt); await forge.deleteBranch(repo, wt.branch)

/** A project as the forge needs it: its id (names the bare repository) and its path on the server. */
export interface ForgeProject {
  id: number;
  /** Absolute path of the project's own Git repository (read only: never written by the forge). */
  path: string;
}

export interface ForgeRepository {
  /** Stable key of the repository on its forge: `local:<project id>`, or `owner/name` on GitHub. */
  repoKey: string;
  /** The project's default branch as imported (its HEAD branch), e.g. `main`. */
  defaultBranch: string;
}

/** An independent working tree on its own branch, created from a pinned baseline. */
export interface Worktree {
  repoKey: string;
  path: string;
  branch: string;
  baseSha: string;
}

export interface FileStat {
  path: string;
  additions: number;
  deletions: number;
}

export interface DiffStats {
  files: FileStat[];
  additions: number;
  deletions: number;
}

export interface CommitResult {
  sha: string;
  /** Number of changed files. */
  files: number;
  additions: number;
  deletions: number;
}

export type PullRequestStatus = 'open' | 'merged' | 'closed';

export interface PullRequest {
  id: number;
  repoKey: string;
  number: number;
  workflowId: string | null;
  headBranch: string;
  baseBranch: string;
  /** Base tip when the PR was opened. */
  baseSha: string;
  /** Head tip last recorded by the forge. */
  headSha: string;
  title: string;
  body: string | null;
  status: PullRequestStatus;
  mergeCommitSha: string | null;
  createdAt: Date;
  updatedAt: Date;
  mergedAt: Date | null;
  /** A draft is never merged (branch protection); absent: the forge does not say. */
  draft?: boolean;
}

export interface OpenPullRequestInput {
  repo: ForgeRepository;
  head: string;
  base: string;
  title: string;
  body?: string;
  workflowId?: string;
  /** Open as a draft (merges are refused until it is marked ready). */
  draft?: boolean;
}

export interface PullRequestDiff extends DiffStats {
  /** The effective PR diff (merge base of base and head .. head), cut at the forge's size cap. */
  diff: string;
  truncated: boolean;
  headSha: string;
  mergeBaseSha: string;
}

export interface BehindState {
  behind: boolean;
  /** Commits on the base branch that the head does not contain. */
  behindBy: number;
  baseSha: string;
  headSha: string;
}

export type SyncResult =
  | { status: 'up_to_date'; headSha: string }
  /** The base was merged into the head; the head moved to `headSha` (a new CI run is needed). */
  | { status: 'synced'; headSha: string; previousHeadSha: string }
  /** Merging the base into the head conflicts in `files`; nothing was changed. */
  | { status: 'conflict'; files: string[] };

export type CiStatus = 'queued' | 'running' | 'passed' | 'failed' | 'cancelled' | 'error';

export interface CiRun {
  id: number;
  pullRequestId: number;
  headSha: string;
  command: string;
  status: CiStatus;
  exitCode: number | null;
  /** Last 64 KiB of the combined output. */
  logTail: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** The repository declares no CI (neither `.svc/ci` nor a package.json test script) at the head. */
export interface NoCi {
  status: 'no_ci';
  headSha: string;
  reason: string;
}

export type CiResult = CiRun | NoCi;

/** One required or reported check at the PR head, normalised across forges (merge-decision input). */
export interface CheckEvidence {
  name: string;
  state: 'passed' | 'failed' | 'pending' | 'cancelled' | 'skipped';
  /** Check name + normalised error signature, for failed checks (CI repair bookkeeping). */
  fingerprint?: string;
}

export type MergeableState = 'clean' | 'behind' | 'dirty' | 'blocked';

export interface Mergeability {
  state: MergeableState;
  reason: string;
  headSha: string;
  baseSha: string;
  /** Conflicting paths when `dirty`. */
  conflictFiles: string[];
  /** The required check (the declared CI) at the head: null when the repository declares none. */
  requiredCheck: { name: string; status: CiStatus | 'missing' } | null;
}

export type MergeMethod = 'ff' | 'merge';

/**
 * Why a merge was refused, in the categories of the spec's merge-stage decision order:
 * `failing` (a required check failed), `pending` (a required check has not passed yet: queued,
 * running, cancelled or missing), `conflict` (dirty), `rule` (a repository rule other than a check:
 * e.g. fast-forward only while behind, PR not open), `error` (permission/API/infrastructure).
 */
export type MergeRefusalCategory = 'failing' | 'pending' | 'conflict' | 'rule' | 'error';

export interface MergeRefusal {
  merged: false;
  category: MergeRefusalCategory;
  reason: string;
  mergeability: Mergeability | null;
}

export type MergeResult = { merged: true; sha: string; method: MergeMethod } | MergeRefusal;

export interface RunCiOptions {
  /** Aborting kills the CI process group; the run is recorded as `cancelled`. */
  signal?: AbortSignal;
  /** Overrides the forge's CI timeout (seconds). */
  timeoutSeconds?: number;
}

/** An issue on the forge's tracker (issue-URL/number requirements, acceptance snapshots). */
export interface ForgeIssue {
  number: number;
  title: string;
  /** The issue text as written (Markdown); '' when empty. */
  body: string;
  state: 'open' | 'closed';
  /** Its page for people (html_url on GitHub). */
  url: string;
  updatedAt: Date;
}

/** The issue tracker of a forge. The local forge has none (`Forge.issues` undefined). */
export interface IssueTracker {
  readIssue(repo: ForgeRepository, number: number): Promise<ForgeIssue>;
  /** Closes the issue with a comment saying why (idempotent: an already closed issue stays closed). */
  closeIssue(repo: ForgeRepository, number: number, comment: string): Promise<void>;
}

export interface Forge {
  /** The forge's issue tracker; undefined when it has none (the local forge). */
  readonly issues?: IssueTracker;
  /** Imports the project on first use (later calls reuse it) and names its default branch. */
  ensureRepository(project: ForgeProject): Promise<ForgeRepository>;
  /** The sha of the default branch now: the baseline that worktrees are pinned to. */
  baseline(repo: ForgeRepository): Promise<string>;
  /** A new branch `branch` at `baseSha`, checked out in a new independent worktree at `path`. */
  createWorktree(
    repo: ForgeRepository,
    opts: { branch: string; baseSha: string; path: string },
  ): Promise<Worktree>;
  /** Removes the worktree directory (uncommitted changes are lost); the branch stays. */
  removeWorktree(worktree: Worktree): Promise<void>;
  /**
   * Stages everything in the worktree and commits it as the orchestrator. Null when nothing changed;
   * ChangedFilesLimitError (nothing committed, index reset) past the changed-files limit.
   */
  commitAll(worktree: Worktree, message: string): Promise<CommitResult | null>;
  /** Publishes the worktree's branch to the forge; returns the pushed head sha. */
  push(worktree: Worktree): Promise<string>;
  openPullRequest(input: OpenPullRequestInput): Promise<PullRequest>;
  /** The record with its head sha refreshed from the branch. */
  getPullRequest(repo: ForgeRepository, number: number): Promise<PullRequest>;
  prDiff(pr: PullRequest): Promise<PullRequestDiff>;
  /** Stats of one commit against its first parent. */
  diffStats(repo: ForgeRepository, sha: string): Promise<DiffStats>;
  isBehind(pr: PullRequest): Promise<BehindState>;
  /** Merges the base into the head in an isolated worktree; never touches the base. */
  syncWithBase(pr: PullRequest): Promise<SyncResult>;
  /** Runs the declared CI on the PR's current head in a clean worktree, and records it. */
  runCi(pr: PullRequest, opts?: RunCiOptions): Promise<CiResult>;
  /** The latest CI run of the PR's current head, if any. */
  latestCi(pr: PullRequest): Promise<CiRun | null>;
  /** The required checks at the PR's current head as merge evidence ([] when none are required). */
  checks(pr: PullRequest): Promise<CheckEvidence[]>;
  mergeability(pr: PullRequest): Promise<Mergeability>;
  /** Merges as the orchestrator, or refuses with evidence; never throws for a refusal. */
  merge(pr: PullRequest, opts: { method: MergeMethod; message?: string }): Promise<MergeResult>;
  /**
   * Conflict resolver, in the worktree bound to the PR branch (merge-stage rule 4): merges the base
   * into it; `conflict` leaves the merge in progress with markers for the agent, `synced` committed it.
   */
  beginConflictResolution(worktree: Worktree, pr: PullRequest): Promise<SyncResult>;
  /** Commits the agent's resolution (refused while conflicts or markers remain). */
  completeConflictResolution(worktree: Worktree, message?: string): Promise<CommitResult>;
  abortConflictResolution(worktree: Worktree): Promise<void>;
  closePullRequest(pr: PullRequest): Promise<PullRequest>;
  /** Deletes a branch (never the default branch, never one checked out in a worktree). */
  deleteBranch(repo: ForgeRepository, branch: string): Promise<void>;
}
