import { terminalRelays } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The live terminal relay's ownership registry (spec document 1, overview item 6; issue 14 item 6):
// session id -> owning API instance address, with an expiry the owner keeps refreshing. Read and written
// on PostgreSQL only (SQLite is one node: the relay registry stays in process). Expand: a new table no
// older build reads.
export default defineMigration({
  id: '0030_terminal_relays',
  kind: 'expand',
  description: 'terminal_relays: session id -> owning API instance of its live terminal relay (expiring)',
  creates: [terminalRelays],
});
