import { agentSessions } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The model proxy records the class of the last provider error it relayed per agent session
// (domain/proxy/provider-errors.ts: context_overflow, hard_quota, ...), so the autonomous runner can
// classify a CLI failure structurally (spec document 2 "Errors" 4) even when the CLI prints no
// structured code. Expand: two nullable columns no older build reads.
export default defineMigration({
  id: '0028_session_provider_error',
  kind: 'expand',
  description:
    'agent_sessions: last_provider_error, last_provider_error_at (class of the last provider error)',
  addsColumns: [[agentSessions, [agentSessions.lastProviderError, agentSessions.lastProviderErrorAt]]],
});
