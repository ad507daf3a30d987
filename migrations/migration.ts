import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { RawSql } from '../db/client.ts';

/**
 * How a revision changes what older application builds can rely on (expand/contract, document 2
 * "Versioning" 4-5):
 * - `expand` adds (tables, nullable or defaulted columns, indexes, backfills): builds that predate it
 *   keep working, so the oldest build able to serve the database does not move;
 * - `contract` drops or renames: only builds from the revision before it on (which by then no longer
 *   use what it removes) can serve the database.
 */
export type MigrationKind = 'expand' | 'contract';

/**
 * One schema revision, described in TypeScript and frozen to SQL once per dialect by
 * `npm run migrate -- freeze <revision>` (migrations/sql/<dialect>/<id>.{up,down}.sql). The runner
 * applies only the frozen SQL, never this description, so a later change to a table in db/schema
 * cannot change what an old revision creates.
 *
 * Frozen `up` = CREATE TABLE for `creates` (referenced tables first, without columns a later revision
 * adds), ADD COLUMN for `addsColumns`, then every `sql.exec` statement of `up`. Frozen `down` = every
 * `sql.exec` statement of `down`, DROP COLUMN for `addsColumns`, DROP TABLE for `creates`. `up`/`down`
 * run only at freeze time against a recorder: literal SQL via `sql.exec`, branching on `sql.dialect`;
 * `sql.query` is refused there. Logic that must run against the live data each time the revision is
 * applied (e.g. seeding from today's role templates) goes in `data`, which runs after the frozen up SQL.
 */
export interface Migration {
  id: string;
  description: string;
  /** Required in practice (a test checks every registered migration); missing counts as `contract`. */
  kind?: MigrationKind;
  creates?: PgTable[];
  addsColumns?: [PgTable, PgColumn[]][];
  up?: (sql: RawSql) => Promise<void>;
  down?: (sql: RawSql) => Promise<void>;
  data?: (sql: RawSql) => Promise<void>;
}

export const defineMigration = (m: Migration) => m;
