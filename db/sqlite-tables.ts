// Derives the SQLite twin of every table from the PostgreSQL definitions in schema/, so the schema is
// written once. Column kinds map as: serial -> integer autoincrement, integer/bigint -> integer,
// varchar/text -> text, boolean -> integer(boolean), timestamptz -> integer(timestamp_ms), real -> real.
import { getTableColumns, sql } from 'drizzle-orm';
import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import {
  index,
  integer,
  real,
  type SQLiteColumnBuilderBase,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';
import * as pg from './schema/index.ts';

export const SQLITE_NOW_MS = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

function isDefaultNow(col: PgColumn): boolean {
  return (
    col.hasDefault && col.default !== undefined && typeof col.default === 'object' && col.default !== null
  );
}

function sqliteColumn(col: PgColumn): SQLiteColumnBuilderBase {
  let b: any;
  switch (col.columnType) {
    case 'PgSerial':
      return integer(col.name).primaryKey({ autoIncrement: true });
    case 'PgInteger':
    case 'PgBigInt53':
      b = integer(col.name);
      break;
    case 'PgBoolean':
      b = integer(col.name, { mode: 'boolean' });
      break;
    case 'PgTimestamp':
      b = integer(col.name, { mode: 'timestamp_ms' });
      break;
    case 'PgReal':
    case 'PgDoublePrecision':
      b = real(col.name);
      break;
    case 'PgText':
    case 'PgVarchar':
      b = text(col.name);
      break;
    default:
      throw new Error(`sqlite-tables: unmapped column type ${col.columnType} (${col.name})`);
  }
  if (col.primary) b = b.primaryKey();
  if (col.notNull && !col.primary) b = b.notNull();
  if (col.hasDefault) b = b.default(isDefaultNow(col) ? SQLITE_NOW_MS : col.default);
  if (col.isUnique) b = b.unique(col.uniqueName);
  return b;
}

function deriveTable(table: PgTable, all: Map<string, any>) {
  const cfg = getTableConfig(table);
  const cols: Record<string, SQLiteColumnBuilderBase> = {};
  const pgCols = getTableColumns(table);
  for (const [key, col] of Object.entries(pgCols)) {
    let b: any = sqliteColumn(col as PgColumn);
    const fk = cfg.foreignKeys.find((f) => f.reference().columns[0]?.name === col.name);
    if (fk) {
      const ref = fk.reference();
      const refTable = getTableConfig(ref.foreignTable).name;
      const refCol = ref.foreignColumns[0]!.name;
      b = b.references(
        () => {
          const target = all.get(refTable);
          const entry = Object.values(getTableColumns(target)).find((c: any) => c.name === refCol);
          return entry;
        },
        { onDelete: fk.onDelete },
      );
    }
    cols[key] = b;
  }
  return sqliteTable(cfg.name, cols, (t: any) =>
    cfg.indexes.map((ix) => {
      const names = ix.config.columns.map((c: any) => c.name as string);
      const targets = names.map((n) => Object.values(t).find((c: any) => c.name === n)) as any[];
      const make = ix.config.unique ? uniqueIndex : index;
      return make(ix.config.name!).on(targets[0], ...targets.slice(1));
    }),
  );
}

/** The SQLite tables, keyed like the PostgreSQL exports of schema/ so repositories use one name. */
export function deriveSqliteTables(): typeof pg {
  const byName = new Map<string, any>();
  const out: Record<string, unknown> = {};
  for (const [key, table] of Object.entries(pg)) {
    const derived = deriveTable(table as PgTable, byName);
    byName.set(getTableConfig(table as PgTable).name, derived);
    out[key] = derived;
  }
  // The SQLite tables expose the same columns and query-builder surface; the cast lets repositories
  // be written once against the PostgreSQL types.
  return out as unknown as typeof pg;
}
