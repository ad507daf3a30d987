import { forgeCiRuns, forgePullRequests } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The local forge (issue 13 item 6): pull-request records per project repository, numbered per
// repository, and the CI runs of their heads (services/forge/local-forge.ts). At most one open PR per
// head and base branch: a partial unique index (same text on both dialects), written here because the
// DDL renderer of `creates` has no partial indexes.
export default defineMigration({
  id: '0024_local_forge',
  kind: 'expand',
  description: 'local forge: forge_pull_requests (numbered per repository), forge_ci_runs',
  creates: [forgePullRequests, forgeCiRuns],
  async up(sql) {
    await sql.exec(
      "CREATE UNIQUE INDEX IF NOT EXISTS forge_pull_requests_open_head ON forge_pull_requests (repo_key, head_branch, base_branch) WHERE status = 'open'",
    );
  },
  async down(sql) {
    await sql.exec('DROP INDEX IF EXISTS forge_pull_requests_open_head');
  },
});
