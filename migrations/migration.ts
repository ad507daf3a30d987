import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { RawSql } from '../db/client.ts';

/**
 * One schema revision. Tables and columns are named by their drizzle definitions; the runner renders
 * the DDL for the active dialect. `up` runs after the tables/columns exist, `down` before they go.
 * Rule: never change a released column's definition in db/schema; add a new migration instead.
 */
export interface Migration {
  id: string;
  description: string;
  creates?: PgTable[];
  addsColumns?: [PgTable, PgColumn[]][];
  up?: (sql: RawSql) => Promise<void>;
  down?: (sql: RawSql) => Promise<void>;
}

export const defineMigration = (m: Migration) => m;
