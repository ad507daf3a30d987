import { remoteRuntimeOutputs } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The runner creates indexes only with tables, so the unique index on the added column is created here.
const INDEX = 'remote_runtime_outputs_session_source';

export default defineMigration({
  id: '0007_remote_output_dedupe',
  kind: 'expand',
  description:
    'source_key on remote_runtime_outputs: agent output re-sent after a failed request is stored once',
  addsColumns: [[remoteRuntimeOutputs, [remoteRuntimeOutputs.sourceKey]]],
  up: async (sql) => {
    await sql.exec(
      `CREATE UNIQUE INDEX IF NOT EXISTS "${INDEX}" ON "remote_runtime_outputs" ("session_id", "source_key")`,
    );
  },
  down: async (sql) => {
    await sql.exec(`DROP INDEX IF EXISTS "${INDEX}"`);
  },
});
