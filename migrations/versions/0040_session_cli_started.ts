import { agentSessions } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// When a remote session's CLI started (issue 28 item 5): a session the agent ended before its CLI ever
// ran (refused start, failed spawn) must not read "completed" as if it had worked. Expand: one nullable
// column no older build reads (sessions from before it have none: their start was not recorded).
export default defineMigration({
  id: '0040_session_cli_started',
  kind: 'expand',
  description: 'agent_sessions: cli_started_at (when the agent first reported the CLI running)',
  addsColumns: [[agentSessions, [agentSessions.cliStartedAt]]],
});
