import { orgSyncItems, orgSyncRuns, teamMembers, teams } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Organization sync (issue 12 item 4): collaboration teams (local or mirrored from a chat platform's
// departments), their members, one row per sync run (run id = the Temporal workflow id) and the run's
// staged platform snapshot (db/schema/orgsync.ts says why the snapshot goes through the database).
export default defineMigration({
  id: '0022_org_teams',
  kind: 'expand',
  description: 'teams, team_members, org_sync_runs, org_sync_items (organization sync from chat platforms)',
  creates: [teams, teamMembers, orgSyncRuns, orgSyncItems],
});
