import { pgTable } from 'drizzle-orm/pg-core';
import { str, ts, updatedAt } from './columns.ts';

// Table introduced by 0030_terminal_relays: which API instance holds the live terminal relay of a remote
// session (spec document 1, overview item 6). One row per session; the owner refreshes `expires_at`
// while its relay lives, and an expired row may be taken over by any instance. Nothing of the terminal's
// bytes is ever stored (terminal history is not persisted).
export const terminalRelays = pgTable('terminal_relays', {
  sessionId: str('session_id', 64).primaryKey(),
  /** The owner's address (SVC_INSTANCE_URL, else its listen URL): where browsers reconnect (code 3010). */
  instanceUrl: str('instance_url', 500).notNull(),
  /** A random id per process: tells two instances apart even behind one address. */
  instanceId: str('instance_id', 64).notNull(),
  expiresAt: ts('expires_at').notNull(),
  updatedAt: updatedAt(),
});
