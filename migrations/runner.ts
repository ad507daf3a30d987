// Applies and rolls back migrations. One runner at a time: a PostgreSQL advisory lock (or SQLite's
// write lock via BEGIN IMMEDIATE) is held while the applied set is re-read and a step runs, so
// concurrent starts never apply the same revision twice.
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type { DatabaseHandle, RawSql } from '../db/client.ts';
import { addColumnSql, columnsOf, createTableSql, dropColumnSql, dropTableSql } from './ddl.ts';
import { HEAD, MIGRATIONS, MIN_COMPATIBLE } from './index.ts';
import { columnNames, tableExists } from './introspect.ts';
import type { Migration } from './migration.ts';

const HISTORY = 'schema_migrations';
const LOCK_KEY = 719_884_201;
export const BASE = 'base';

export type Log = (line: string) => void;

async function ensureHistory(sql: RawSql) {
  await sql.exec(
    `CREATE TABLE IF NOT EXISTS ${HISTORY} (version VARCHAR(100) PRIMARY KEY, applied_at ${
      sql.dialect === 'postgres'
        ? 'TIMESTAMPTZ NOT NULL DEFAULT now()'
        : "TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ'))"
    })`,
  );
}

export async function appliedVersions(sql: RawSql): Promise<string[]> {
  if (!(await tableExists(sql, HISTORY))) return [];
  const rows = await sql.query<{ version: string }>(`SELECT version FROM ${HISTORY}`);
  return rows.map((r) => r.version);
}

/** The newest applied revision, `base` when none, or an unknown id when the schema is newer than this build. */
export async function currentRevision(sql: RawSql): Promise<string> {
  const applied = await appliedVersions(sql);
  const unknown = applied.filter((v) => !MIGRATIONS.some((m) => m.id === v));
  if (unknown.length) return unknown.sort().at(-1)!;
  const idx = Math.max(-1, ...applied.map((v) => MIGRATIONS.findIndex((m) => m.id === v)));
  return idx < 0 ? BASE : MIGRATIONS[idx]!.id;
}

export interface Compatibility {
  compatible: boolean;
  current: string;
  required: string;
  reason?: 'too_old' | 'too_new';
  message?: string;
}

export async function checkCompatibility(sql: RawSql): Promise<Compatibility> {
  const current = await currentRevision(sql);
  const required = HEAD;
  const idx = MIGRATIONS.findIndex((m) => m.id === current);
  const minIdx = MIGRATIONS.findIndex((m) => m.id === MIN_COMPATIBLE);
  if (current !== BASE && idx < 0)
    return {
      compatible: false,
      current,
      required,
      reason: 'too_new',
      message: `Database schema revision ${current} is newer than this build supports (${MIN_COMPATIBLE}..${HEAD}). Upgrade the application, or run \`npm run migrate -- downgrade ${HEAD}\` with the newer build.`,
    };
  if (idx < minIdx)
    return {
      compatible: false,
      current,
      required,
      reason: 'too_old',
      message: `Database schema revision ${current} is older than required ${MIN_COMPATIBLE}. Run \`npm run migrate -- upgrade head\` and restart.`,
    };
  return { compatible: true, current, required };
}

/** Tables in creation order (referenced tables first), since PostgreSQL checks references at CREATE. */
function topoSort(tables: PgTable[]): PgTable[] {
  const names = new Map(tables.map((t) => [getTableConfig(t).name, t]));
  const out: PgTable[] = [];
  const seen = new Set<string>();
  const visit = (t: PgTable) => {
    const name = getTableConfig(t).name;
    if (seen.has(name)) return;
    seen.add(name);
    for (const fk of getTableConfig(t).foreignKeys) {
      const dep = names.get(getTableConfig(fk.reference().foreignTable).name);
      if (dep && dep !== t) visit(dep);
    }
    out.push(t);
  };
  tables.forEach(visit);
  return out;
}

/** Column names of `table` that a migration after `index` adds (so the creator leaves them out). */
function addedLater(table: PgTable, index: number): Set<string> {
  const out = new Set<string>();
  for (const m of MIGRATIONS.slice(index + 1))
    for (const [t, cols] of m.addsColumns ?? []) if (t === table) for (const c of cols) out.add(c.name);
  return out;
}

async function applyUp(sql: RawSql, m: Migration, index: number) {
  for (const table of topoSort(m.creates ?? []))
    for (const stmt of createTableSql(table, sql.dialect, addedLater(table, index))) await sql.exec(stmt);
  for (const [table, cols] of m.addsColumns ?? []) {
    const existing = new Set(await columnNames(sql, getTableConfig(table).name));
    for (const col of cols)
      if (!existing.has(col.name)) await sql.exec(addColumnSql(table, col, sql.dialect));
  }
  await m.up?.(sql);
  await sql.query(`INSERT INTO ${HISTORY} (version) VALUES (?) ON CONFLICT DO NOTHING`, [m.id]);
}

async function applyDown(sql: RawSql, m: Migration) {
  await m.down?.(sql);
  for (const [table, cols] of m.addsColumns ?? []) {
    const name = getTableConfig(table).name;
    if (!(await tableExists(sql, name))) continue;
    const existing = new Set(await columnNames(sql, name));
    for (const col of cols) if (existing.has(col.name)) await sql.exec(dropColumnSql(table, col));
  }
  for (const table of topoSort(m.creates ?? []).reverse()) await sql.exec(dropTableSql(table));
  await sql.query(`DELETE FROM ${HISTORY} WHERE version = ?`, [m.id]);
}

/** Runs `step` with the migration lock held, inside one transaction, on one connection. */
async function locked<T>(handle: DatabaseHandle, step: (sql: RawSql) => Promise<T>): Promise<T> {
  if (handle.dialect === 'postgres') {
    const client = await handle.pool!.connect();
    const sql: RawSql = {
      dialect: 'postgres',
      exec: async (s) => void (await client.query(s)),
      query: async (text, params = []) => {
        let i = 0;
        return (
          await client.query(
            text.replace(/\?/g, () => `$${++i}`),
            params,
          )
        ).rows;
      },
    };
    try {
      await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
      await client.query('BEGIN');
      try {
        const out = await step(sql);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  }
  return handle.transaction(({ sql }) => step(sql));
}

function targetIndex(target: string): number {
  if (target === 'head') return MIGRATIONS.length - 1;
  if (target === BASE) return -1;
  const idx = MIGRATIONS.findIndex((m) => m.id === target || m.id.split('_')[0] === target);
  if (idx < 0)
    throw new Error(`Unknown revision "${target}". Known: ${MIGRATIONS.map((m) => m.id).join(', ')}`);
  return idx;
}

export async function upgrade(
  handle: DatabaseHandle,
  target = 'head',
  log: Log = () => {},
): Promise<string[]> {
  const goal = targetIndex(target);
  const done: string[] = [];
  for (let i = 0; i <= goal; i++) {
    const m = MIGRATIONS[i]!;
    const ran = await locked(handle, async (sql) => {
      await ensureHistory(sql);
      if ((await appliedVersions(sql)).includes(m.id)) return false;
      await applyUp(sql, m, i);
      return true;
    });
    if (ran) {
      log(`upgraded to ${m.id}: ${m.description}`);
      done.push(m.id);
    }
  }
  return done;
}

/** Rolls back one revision, or every revision after `target` (`base` rolls back everything). */
export async function downgrade(
  handle: DatabaseHandle,
  target?: string,
  log: Log = () => {},
): Promise<string[]> {
  const current = await currentRevision(handle.sql);
  if (current === BASE) return [];
  const curIdx = MIGRATIONS.findIndex((m) => m.id === current);
  if (curIdx < 0)
    throw new Error(
      `Current revision ${current} is unknown to this build; downgrade it with the build that created it.`,
    );
  const goal = target === undefined ? curIdx - 1 : targetIndex(target);
  const done: string[] = [];
  for (let i = curIdx; i > goal; i--) {
    const m = MIGRATIONS[i]!;
    const ran = await locked(handle, async (sql) => {
      if (!(await appliedVersions(sql)).includes(m.id)) return false;
      await applyDown(sql, m);
      return true;
    });
    if (ran) {
      log(`downgraded ${m.id}`);
      done.push(m.id);
    }
  }
  return done;
}

export { columnsOf };
