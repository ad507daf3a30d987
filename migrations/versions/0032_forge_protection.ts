import { forgePullRequestReviews, forgePullRequests } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Branch protection of the local forge (issue 15 item 1): pull requests can be drafts (a draft is never
// merged), and reviews are recorded per reviewer so a `required_approvals` rule declared by the base
// branch (`.svc/branch-protection.json`, services/forge/local-protection.ts) can be met. Expand: a
// defaulted column no older build reads, and a new table.
export default defineMigration({
  id: '0032_forge_protection',
  kind: 'expand',
  description: 'local forge: forge_pull_requests.draft, forge_pull_request_reviews (approval records)',
  addsColumns: [[forgePullRequests, [forgePullRequests.draft]]],
  creates: [forgePullRequestReviews],
});
