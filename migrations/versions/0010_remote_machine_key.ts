import {
  agentSessions,
  registrationTokens,
  remoteMachines,
  remoteRuntimeCommands,
} from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The runner creates indexes only with tables, so the index on the existing usage_reports is created here.
const INDEX = 'usage_reports_session_received';

export default defineMigration({
  id: '0010_remote_machine_key',
  kind: 'expand',
  description:
    'machine_key binds sessions and commands to one registration of a machine id; re-enrolment and ' +
    'revocation of registration tokens; index for the usage-report rate limit',
  addsColumns: [
    [remoteMachines, [remoteMachines.machineKey]],
    [agentSessions, [agentSessions.remoteMachineKey]],
    [remoteRuntimeCommands, [remoteRuntimeCommands.machineKey]],
    [
      registrationTokens,
      [registrationTokens.machineId, registrationTokens.revokedAt, registrationTokens.revokedBy],
    ],
  ],
  up: async (sql) => {
    // Existing machines get a key that new (random UUID) keys can never equal; their sessions and
    // commands keep working because they are given the key of the machine they are bound to now.
    await sql.exec(
      `UPDATE "remote_machines" SET "machine_key" = 'legacy-' || "id" WHERE "machine_key" IS NULL`,
    );
    await sql.exec(
      `UPDATE "agent_sessions" SET "remote_machine_key" = (SELECT m."machine_key" FROM "remote_machines" m
         WHERE m."machine_id" = "agent_sessions"."remote_machine_id")
       WHERE "remote_machine_id" IS NOT NULL AND "remote_machine_key" IS NULL`,
    );
    await sql.exec(
      `UPDATE "remote_runtime_commands" SET "machine_key" = (SELECT m."machine_key" FROM "remote_machines" m
         WHERE m."machine_id" = "remote_runtime_commands"."machine_id")
       WHERE "machine_key" IS NULL`,
    );
    await sql.exec(`CREATE INDEX IF NOT EXISTS "${INDEX}" ON "usage_reports" ("session_id", "created_at")`);
  },
  down: async (sql) => {
    await sql.exec(`DROP INDEX IF EXISTS "${INDEX}"`);
  },
});
