// The only SQL of forge_pull_requests (migration 0024_local_forge). Numbers are per repository: the
// next number is MAX+1 inside the INSERT, and the unique (repo_key, number) index turns a race between
// two openers into a retry, so numbers are dense and never shared; a partial unique index keeps one
// open PR per head and base. Same SQL text on both dialects.
import type { PullRequest, PullRequestStatus } from '../../../domain/forge/types.ts';
import type { RawSql } from '../../client.ts';
import { isUniqueViolation } from '../../unique-violation.ts';

interface Row {
  id: number | string;
  repo_key: string;
  number: number | string;
  workflow_id: string | null;
  head_branch: string;
  base_branch: string;
  base_sha: string;
  head_sha: string;
  title: string;
  body: string | null;
  status: string;
  merge_commit_sha: string | null;
  created_at: Date | number;
  updated_at: Date | number;
  merged_at: Date | number | null;
  draft?: boolean | number | null;
}

const date = (v: Date | number | string) => (v instanceof Date ? v : new Date(Number(v)));

const toPullRequest = (r: Row): PullRequest => ({
  id: Number(r.id),
  repoKey: r.repo_key,
  number: Number(r.number),
  workflowId: r.workflow_id,
  headBranch: r.head_branch,
  baseBranch: r.base_branch,
  baseSha: r.base_sha,
  headSha: r.head_sha,
  title: r.title,
  body: r.body,
  status: r.status as PullRequestStatus,
  mergeCommitSha: r.merge_commit_sha,
  createdAt: date(r.created_at),
  updatedAt: date(r.updated_at),
  mergedAt: r.merged_at == null ? null : date(r.merged_at),
  draft: Boolean(Number(r.draft ?? 0)),
});

export interface PullRequestInsert {
  repoKey: string;
  workflowId: string | null;
  headBranch: string;
  baseBranch: string;
  baseSha: string;
  headSha: string;
  title: string;
  body: string | null;
  /** Opened as a draft (migration 0032_forge_protection). */
  draft?: boolean;
}

export function forgePullRequestsRepository(sql: RawSql) {
  const byId = async (id: number) => {
    const [row] = await sql.query<Row>('SELECT * FROM forge_pull_requests WHERE id = ?', [id]);
    return row ? toPullRequest(row) : undefined;
  };
  const openFor = async (
    repoKey: string,
    headBranch: string,
    baseBranch: string,
  ): Promise<PullRequest | undefined> => {
    const [row] = await sql.query<Row>(
      "SELECT * FROM forge_pull_requests WHERE repo_key = ? AND head_branch = ? AND base_branch = ? AND status = 'open'",
      [repoKey, headBranch, baseBranch],
    );
    return row ? toPullRequest(row) : undefined;
  };
  return {
    byId,
    openFor,

    /**
     * Inserts with the repository's next number (retried when another opener took it). `duplicate`:
     * an open PR from the same head into the same base exists (unique index forge_pull_requests_open_head).
     */
    async insert(p: PullRequestInsert): Promise<PullRequest | 'duplicate'> {
      for (let attempt = 0; ; attempt++) {
        const now = new Date();
        try {
          const [row] = await sql.query<{ id: number }>(
            `INSERT INTO forge_pull_requests
               (repo_key, number, workflow_id, head_branch, base_branch, base_sha, head_sha, title, body, status, draft, created_at, updated_at)
             VALUES (?, (SELECT COALESCE(MAX(number), 0) + 1 FROM forge_pull_requests WHERE repo_key = ?),
               ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)
             RETURNING id`,
            [
              p.repoKey,
              p.repoKey,
              p.workflowId,
              p.headBranch,
              p.baseBranch,
              p.baseSha,
              p.headSha,
              p.title,
              p.body,
              p.draft === true,
              now,
              now,
            ],
          );
          return (await byId(Number(row!.id)))!;
        } catch (err) {
          if (!isUniqueViolation(err)) throw err;
          if (await openFor(p.repoKey, p.headBranch, p.baseBranch)) return 'duplicate';
          if (attempt >= 20) throw err;
        }
      }
    },

    async byNumber(repoKey: string, number: number): Promise<PullRequest | undefined> {
      const [row] = await sql.query<Row>(
        'SELECT * FROM forge_pull_requests WHERE repo_key = ? AND number = ?',
        [repoKey, number],
      );
      return row ? toPullRequest(row) : undefined;
    },

    async byWorkflow(workflowId: string): Promise<PullRequest[]> {
      const rows = await sql.query<Row>(
        'SELECT * FROM forge_pull_requests WHERE workflow_id = ? ORDER BY id',
        [workflowId],
      );
      return rows.map(toPullRequest);
    },

    /** Records the shas last seen on the branches (open PRs only). */
    async setShas(id: number, shas: { headSha: string; baseSha?: string }): Promise<void> {
      if (shas.baseSha)
        await sql.query(
          "UPDATE forge_pull_requests SET head_sha = ?, base_sha = ?, updated_at = ? WHERE id = ? AND status = 'open'",
          [shas.headSha, shas.baseSha, new Date(), id],
        );
      else
        await sql.query(
          "UPDATE forge_pull_requests SET head_sha = ?, updated_at = ? WHERE id = ? AND status = 'open'",
          [shas.headSha, new Date(), id],
        );
    },

    /** open -> merged, once; false when the PR was no longer open. */
    async markMerged(
      id: number,
      m: { mergeCommitSha: string; headSha: string; baseSha: string; at: Date },
    ): Promise<boolean> {
      const rows = await sql.query<{ id: number }>(
        `UPDATE forge_pull_requests SET status = 'merged', merge_commit_sha = ?, head_sha = ?, base_sha = ?,
           merged_at = ?, updated_at = ? WHERE id = ? AND status = 'open' RETURNING id`,
        [m.mergeCommitSha, m.headSha, m.baseSha, m.at, m.at, id],
      );
      return rows.length === 1;
    },

    /** Marks an open PR draft or ready for review; false when it is not open. */
    async setDraft(id: number, draft: boolean): Promise<boolean> {
      const rows = await sql.query<{ id: number }>(
        "UPDATE forge_pull_requests SET draft = ?, updated_at = ? WHERE id = ? AND status = 'open' RETURNING id",
        [draft, new Date(), id],
      );
      return rows.length === 1;
    },

    async markClosed(id: number): Promise<void> {
      await sql.query(
        "UPDATE forge_pull_requests SET status = 'closed', updated_at = ? WHERE id = ? AND status = 'open'",
        [new Date(), id],
      );
    },
  };
}
