import { agentSessions } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// When a remote session's CLI started (issue 28 item 5): a session the agent ended before its CLI ever
// ran (refused start, failed spawn) must not read "completed" as if it had worked. Expand: one nullable
// column no older build reads. Earlier remote sessions get the best evidence there is: a buffered
// "CLI started (pid N)" note of the agent, or any message or token recorded for them (their created_at stands in).
export default defineMigration({
  id: '0040_session_cli_started',
  kind: 'expand',
  description: 'agent_sessions: cli_started_at (when the agent first reported the CLI process started)',
  addsColumns: [[agentSessions, [agentSessions.cliStartedAt]]],
  up: async (sql) => {
    await sql.exec(
      `UPDATE agent_sessions SET cli_started_at = created_at
       WHERE workspace_type = 'remote' AND cli_started_at IS NULL
         AND (message_count > 0 OR total_tokens > 0 OR EXISTS (
           SELECT 1 FROM remote_runtime_outputs o
           WHERE o.session_id = agent_sessions.session_id AND o.stream = 'system'
             AND o.payload LIKE '%CLI started (pid%'))`,
    );
  },
});
