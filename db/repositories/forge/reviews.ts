// The only SQL of forge_pull_request_reviews (migration 0032_forge_protection): one review per
// reviewer and pull request; a new review by the same reviewer replaces the earlier one (upsert on the
// unique index), so "approved, then changes requested" counts as not approved. Same SQL text on both
// dialects.
import type { RawSql } from '../../client.ts';

export type ReviewState = 'approved' | 'changes_requested';

export interface PullRequestReview {
  pullRequestId: number;
  reviewer: string;
  state: ReviewState;
  headSha: string;
  createdAt: Date;
}

interface Row {
  pull_request_id: number | string;
  reviewer: string;
  state: string;
  head_sha: string;
  created_at: Date | number;
}

const date = (v: Date | number | string) => (v instanceof Date ? v : new Date(Number(v)));

export function forgeReviewsRepository(sql: RawSql) {
  return {
    async record(r: { pullRequestId: number; reviewer: string; state: ReviewState; headSha: string }) {
      await sql.query(
        `INSERT INTO forge_pull_request_reviews (pull_request_id, reviewer, state, head_sha, created_at)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (pull_request_id, reviewer)
         DO UPDATE SET state = excluded.state, head_sha = excluded.head_sha, created_at = excluded.created_at`,
        [r.pullRequestId, r.reviewer, r.state, r.headSha, new Date()],
      );
    },

    async listFor(pullRequestId: number): Promise<PullRequestReview[]> {
      const rows = await sql.query<Row>(
        'SELECT pull_request_id, reviewer, state, head_sha, created_at FROM forge_pull_request_reviews WHERE pull_request_id = ? ORDER BY id',
        [pullRequestId],
      );
      return rows.map((r) => ({
        pullRequestId: Number(r.pull_request_id),
        reviewer: r.reviewer,
        state: r.state as ReviewState,
        headSha: r.head_sha,
        createdAt: date(r.created_at),
      }));
    },
  };
}
