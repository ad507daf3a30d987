import { apiKeyStore } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// The runner creates indexes only with tables, so the unique index on existing columns is created here,
// after older duplicate names are made unique (the oldest keeps its name; later ones get ` #<id>`).
const INDEX = 'api_key_store_tenant_name';

export default defineMigration({
  id: '0008_api_key_origin',
  // A new unique index constrains what older builds may write (document 2 "Versioning" 4: constraints
  // come after all instances run the new version), so builds before 0007 must not serve it.
  kind: 'contract',
  description:
    'created_by_system_admin on api_key_store (keys a tenant admin may not change; egress policy) and unique key names per tenant',
  addsColumns: [[apiKeyStore, [apiKeyStore.createdBySystemAdmin]]],
  up: async (sql) => {
    // Keys created by a user who is a system administrator today are treated as theirs.
    await sql.exec(
      `UPDATE "api_key_store" SET "created_by_system_admin" = TRUE WHERE "created_by" IN (SELECT "id" FROM "users" WHERE "role" IN ('platform_admin', 'admin'))`,
    );
    await sql.exec(
      `UPDATE "api_key_store" SET "key_name" = SUBSTR("key_name", 1, 240) || ' #' || CAST("id" AS TEXT) WHERE "id" NOT IN (SELECT MIN("id") FROM "api_key_store" GROUP BY "tenant_id", "key_name")`,
    );
    await sql.exec(
      `CREATE UNIQUE INDEX IF NOT EXISTS "${INDEX}" ON "api_key_store" ("tenant_id", "key_name")`,
    );
  },
  down: async (sql) => {
    await sql.exec(`DROP INDEX IF EXISTS "${INDEX}"`);
  },
});
