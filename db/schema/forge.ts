// The local forge's records (issue 13 item 6, migration 0024_local_forge): pull requests between
// branches of a project's bare repository on the server (services/forge/local-forge.ts), numbered per
// repository, and the CI runs of their heads (the repository's declared test command run in a clean
// worktree). The Git objects themselves live in `<data dir>/forge/<project id>.git`, never here.
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { bool, createdAt, id, int, str, ts, txt, updatedAt } from './columns.ts';

export const forgePullRequests = pgTable(
  'forge_pull_requests',
  {
    id: id(),
    /** The forge's repository key (`local:<project id>` for the local forge). */
    repoKey: str('repo_key', 200).notNull(),
    /** 1, 2, 3... per repository. */
    number: integer('number').notNull(),
    /** The autonomous workflow that opened it, when one did. */
    workflowId: str('workflow_id', 64),
    headBranch: str('head_branch', 255).notNull(),
    baseBranch: str('base_branch', 255).notNull(),
    /** The base branch tip when the PR was opened. */
    baseSha: str('base_sha', 64).notNull(),
    /** The head branch tip last seen by the forge (open, sync, CI, merge). */
    headSha: str('head_sha', 64).notNull(),
    title: txt('title').notNull(),
    body: txt('body'),
    /** open | merged | closed */
    status: str('status', 16).notNull().default('open'),
    mergeCommitSha: str('merge_commit_sha', 64),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    mergedAt: ts('merged_at'),
    /** A draft PR is never merged (branch protection, migration 0032_forge_protection). */
    draft: bool('draft', false),
  },
  (t) => [
    uniqueIndex('forge_pull_requests_repo_number').on(t.repoKey, t.number),
    // One open PR per head and base (partial; the migration writes it as raw SQL).
    uniqueIndex('forge_pull_requests_open_head')
      .on(t.repoKey, t.headBranch, t.baseBranch)
      .where(sql`status = 'open'`),
    index('forge_pull_requests_workflow').on(t.workflowId),
  ],
);

export const forgeCiRuns = pgTable(
  'forge_ci_runs',
  {
    id: id(),
    pullRequestId: integer('pull_request_id')
      .notNull()
      .references(() => forgePullRequests.id, { onDelete: 'cascade' }),
    headSha: str('head_sha', 64).notNull(),
    /** The command as run (argv joined with spaces), for the record only. */
    command: txt('command').notNull(),
    /** queued | running | passed | failed | cancelled | error */
    status: str('status', 16).notNull().default('queued'),
    exitCode: int('exit_code'),
    /** The last 64 KiB of the interleaved stdout/stderr. */
    logTail: txt('log_tail'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('forge_ci_runs_pull_request').on(t.pullRequestId, t.headSha)],
);

/**
 * Reviews recorded on local-forge pull requests (migration 0032_forge_protection): the approval
 * records a `required_approvals` rule of `.svc/branch-protection.json` counts. One row per reviewer and
 * PR (a later review by the same reviewer replaces the earlier one); `head_sha` is the head reviewed,
 * so `dismiss_stale_approvals` can ignore approvals of an older head.
 */
export const forgePullRequestReviews = pgTable(
  'forge_pull_request_reviews',
  {
    id: id(),
    pullRequestId: integer('pull_request_id')
      .notNull()
      .references(() => forgePullRequests.id, { onDelete: 'cascade' }),
    reviewer: str('reviewer', 255).notNull(),
    /** approved | changes_requested */
    state: str('state', 32).notNull(),
    headSha: str('head_sha', 64).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('forge_pull_request_reviews_reviewer').on(t.pullRequestId, t.reviewer)],
);
