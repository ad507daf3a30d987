import {
  agentSessions,
  apiKeyStore,
  machineAssignments,
  registrationTokens,
  remoteMachines,
} from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

export default defineMigration({
  id: '0002_remote_workspace',
  kind: 'expand',
  description:
    'remote machines, assignments, stored provider keys, registration tokens; remote columns on agent_sessions',
  creates: [remoteMachines, machineAssignments, apiKeyStore, registrationTokens],
  addsColumns: [
    [agentSessions, [agentSessions.workspaceType, agentSessions.remoteMachineId, agentSessions.pausedAt]],
  ],
});
