// Reads the live schema back (tables, columns, nullability, indexes) in one neutral shape, so tests can
// compare the database after up/down/up against itself and against the definitions in db/schema.
import type { RawSql } from '../db/client.ts';
import { isFullTextArtefact } from '../db/full-text.ts';

export interface LiveColumn {
  name: string;
  type: string;
  notNull: boolean;
}
export interface LiveSchema {
  tables: Record<string, { columns: LiveColumn[]; indexes: string[] }>;
  views: string[];
}

export async function tableExists(sql: RawSql, table: string): Promise<boolean> {
  const rows =
    sql.dialect === 'sqlite'
      ? await sql.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?`, [table])
      : await sql.query(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`,
          [table],
        );
  return rows.length > 0;
}

export async function columnNames(sql: RawSql, table: string): Promise<string[]> {
  if (sql.dialect === 'sqlite') {
    const rows = await sql.query<{ name: string }>(`SELECT name FROM pragma_table_info(?)`, [table]);
    return rows.map((r) => r.name);
  }
  const rows = await sql.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?`,
    [table],
  );
  return rows.map((r) => r.column_name);
}

export async function introspect(sql: RawSql): Promise<LiveSchema> {
  const out: LiveSchema = { tables: {}, views: [] };
  if (sql.dialect === 'sqlite') {
    const tables = await sql.query<{ name: string; type: string }>(
      `SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name`,
    );
    for (const { name, type } of tables) {
      if (isFullTextArtefact(name)) continue; // dialect-specific search index, not in db/schema
      if (type === 'view') {
        out.views.push(name);
        continue;
      }
      const cols = await sql.query<{ name: string; type: string; notnull: number; pk: number }>(
        `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`,
        [name],
      );
      const idx = await sql.query<{ name: string }>(
        `SELECT name FROM pragma_index_list(?) WHERE origin = 'c' ORDER BY name`,
        [name],
      );
      out.tables[name] = {
        columns: cols.map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1 || c.pk === 1 })),
        indexes: idx.map((i) => i.name),
      };
    }
    return out;
  }
  const cols = await sql.query<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
  }>(
    `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position`,
  );
  for (const c of cols) {
    out.tables[c.table_name] ??= { columns: [], indexes: [] };
    out.tables[c.table_name]!.columns.push({
      name: c.column_name,
      type: c.data_type,
      notNull: c.is_nullable === 'NO',
    });
  }
  const idx = await sql.query<{ tablename: string; indexname: string }>(
    `SELECT tablename, indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_unique' ORDER BY indexname`,
  );
  for (const i of idx)
    if (!isFullTextArtefact(i.indexname)) out.tables[i.tablename]?.indexes.push(i.indexname);
  const views = await sql.query<{ name: string }>(
    `SELECT matviewname AS name FROM pg_matviews WHERE schemaname = current_schema()
     UNION SELECT viewname AS name FROM pg_views WHERE schemaname = current_schema() ORDER BY name`,
  );
  out.views = views.map((v) => v.name);
  return out;
}
