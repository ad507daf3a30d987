// Renders DDL for both dialects from the drizzle table definitions in db/schema, so migration
// descriptions never restate a column by hand. Used only by `freeze` (freeze.ts), which writes the result
// to migrations/sql once; the runner never renders. Every statement is guarded (IF [NOT] EXISTS, or a
// column check the runner does for ADD/DROP COLUMN) so running a migration twice is harmless.
import { getTableColumns } from 'drizzle-orm';
import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import type { Dialect } from '../db/client.ts';

const q = (name: string) => `"${name}"`;

function sqlType(col: PgColumn, dialect: Dialect): string {
  if (dialect === 'postgres') return col.getSQLType();
  switch (col.columnType) {
    case 'PgSerial':
    case 'PgInteger':
    case 'PgBigInt53':
    case 'PgBoolean':
    case 'PgTimestamp':
      return 'INTEGER';
    case 'PgReal':
    case 'PgDoublePrecision':
      return 'REAL';
    default:
      return 'TEXT';
  }
}

function defaultClause(col: PgColumn, dialect: Dialect): string {
  if (!col.hasDefault || col.default === undefined) return '';
  const d = col.default as unknown;
  if (d !== null && typeof d === 'object')
    return dialect === 'postgres'
      ? ' DEFAULT now()'
      : ` DEFAULT (cast(unixepoch('subsec') * 1000 as integer))`;
  if (typeof d === 'boolean') return dialect === 'postgres' ? ` DEFAULT ${d}` : ` DEFAULT ${d ? 1 : 0}`;
  if (typeof d === 'number') return ` DEFAULT ${d}`;
  return ` DEFAULT '${String(d).replace(/'/g, "''")}'`;
}

function columnDef(table: PgTable, col: PgColumn, dialect: Dialect): string {
  if (col.columnType === 'PgSerial')
    return dialect === 'postgres'
      ? `${q(col.name)} serial PRIMARY KEY`
      : `${q(col.name)} INTEGER PRIMARY KEY AUTOINCREMENT`;
  let out = `${q(col.name)} ${sqlType(col, dialect)}`;
  if (col.primary) out += ' PRIMARY KEY';
  if (col.notNull && !col.primary) out += ' NOT NULL';
  out += defaultClause(col, dialect);
  if (col.isUnique) out += ` CONSTRAINT ${q(col.uniqueName!)} UNIQUE`;
  const fk = getTableConfig(table).foreignKeys.find((f) => f.reference().columns[0]?.name === col.name);
  if (fk) {
    const ref = fk.reference();
    out += ` REFERENCES ${q(getTableConfig(ref.foreignTable).name)}(${q(ref.foreignColumns[0]!.name)})`;
    if (fk.onDelete) out += ` ON DELETE ${fk.onDelete.toUpperCase()}`;
  }
  return out;
}

export const tableName = (table: PgTable) => getTableConfig(table).name;

export function columnsOf(table: PgTable): PgColumn[] {
  return Object.values(getTableColumns(table)) as PgColumn[];
}

/**
 * CREATE TABLE (without `excluded` columns, which later migrations add) plus its indexes. Partial
 * indexes (`.where(...)` in db/schema) are left out: their predicate is dialect text that the migration
 * writes itself in `up` (see 0020, 0024), so a partial unique index can never be rendered as a full one.
 */
export function createTableSql(
  table: PgTable,
  dialect: Dialect,
  excluded: Set<string> = new Set(),
): string[] {
  const cfg = getTableConfig(table);
  const cols = columnsOf(table).filter((c) => !excluded.has(c.name));
  const body = cols.map((c) => `  ${columnDef(table, c, dialect)}`).join(',\n');
  const out = [`CREATE TABLE IF NOT EXISTS ${q(cfg.name)} (\n${body}\n)`];
  for (const ix of cfg.indexes) {
    const names = ix.config.columns.map((c: any) => c.name as string);
    if (names.some((n) => excluded.has(n)) || ix.config.where) continue;
    out.push(
      `CREATE ${ix.config.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${q(ix.config.name!)} ON ${q(cfg.name)} (${names.map(q).join(', ')})`,
    );
  }
  return out;
}

export const dropTableSql = (table: PgTable) => `DROP TABLE IF EXISTS ${q(tableName(table))}`;

export function addColumnSql(table: PgTable, col: PgColumn, dialect: Dialect): string {
  return `ALTER TABLE ${q(tableName(table))} ADD COLUMN ${columnDef(table, col, dialect)}`;
}

export function dropColumnSql(table: PgTable, col: PgColumn): string {
  return `ALTER TABLE ${q(tableName(table))} DROP COLUMN ${q(col.name)}`;
}
