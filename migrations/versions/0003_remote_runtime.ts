import { remoteRuntimeCommands, remoteRuntimeOutputs } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

export default defineMigration({
  id: '0003_remote_runtime',
  kind: 'expand',
  description: 'persisted agent command queue and session output buffer',
  creates: [remoteRuntimeCommands, remoteRuntimeOutputs],
});
