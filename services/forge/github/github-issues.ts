// The GitHub forge's issue tracker (domain/forge/types.ts IssueTracker): read an issue (issue-URL
// requirements, acceptance snapshots) and close it with a comment saying why. Pull requests are issues
// on GitHub's API too: a number that is a PR is refused as "not found" here.
import type { Octokit } from '@octokit/rest';
import { ForgeNotFoundError } from '../../../domain/forge/errors.ts';
import type { ForgeIssue, ForgeRepository, IssueTracker } from '../../../domain/forge/types.ts';
import { toForgeError } from './api-errors.ts';
import { parseRepoKey } from './remote-url.ts';

export const MAX_ISSUE_COMMENT_CHARS = 65_536;

export class GitHubIssues implements IssueTracker {
  constructor(
    private readonly octokit: Octokit,
    private readonly secrets: () => readonly string[],
  ) {}

  private name(repo: ForgeRepository) {
    const n = parseRepoKey(repo.repoKey);
    if (!n) throw new ForgeNotFoundError(`Not a GitHub repository: ${repo.repoKey}`);
    return n;
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toForgeError(err, what, this.secrets());
    }
  }

  async readIssue(repo: ForgeRepository, number: number): Promise<ForgeIssue> {
    const { owner, repo: name } = this.name(repo);
    const r = await this.call(`read issue #${number}`, () =>
      this.octokit.rest.issues.get({ owner, repo: name, issue_number: number }),
    );
    if (r.data.pull_request)
      throw new ForgeNotFoundError(`#${number} of ${repo.repoKey} is a pull request, not an issue`);
    return {
      number: r.data.number,
      title: r.data.title,
      body: r.data.body ?? '',
      state: r.data.state === 'closed' ? 'closed' : 'open',
      url: r.data.html_url,
      updatedAt: new Date(r.data.updated_at),
    };
  }

  /**
   * Comments (unless the same comment is already there: a retried call does not post it twice), then
   * closes as completed. An issue already closed stays closed and gets no comment.
   */
  async closeIssue(repo: ForgeRepository, number: number, comment: string): Promise<void> {
    const { owner, repo: name } = this.name(repo);
    const issue = await this.readIssue(repo, number);
    if (issue.state === 'closed') return;
    const body = comment.slice(0, MAX_ISSUE_COMMENT_CHARS);
    const existing = await this.call(`read comments of issue #${number}`, () =>
      this.octokit.paginate(this.octokit.rest.issues.listComments, {
        owner,
        repo: name,
        issue_number: number,
        per_page: 100,
      }),
    );
    if (body.trim() && !existing.some((c) => c.body === body))
      await this.call(`comment on issue #${number}`, () =>
        this.octokit.rest.issues.createComment({ owner, repo: name, issue_number: number, body }),
      );
    await this.call(`close issue #${number}`, () =>
      this.octokit.rest.issues.update({
        owner,
        repo: name,
        issue_number: number,
        state: 'closed',
        state_reason: 'completed',
      }),
    );
  }
}
