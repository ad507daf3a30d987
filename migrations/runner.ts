// Applies and rolls back migrations from their frozen SQL (migrations/sql), never from today's schema.
// One runner at a time: a PostgreSQL advisory lock (or SQLite's write lock via BEGIN IMMEDIATE) is held
// while the applied set is re-read and a step runs, so concurrent starts never apply a revision twice.
import type { DatabaseHandle, RawSql } from '../db/client.ts';
import { type Direction, readFrozen, SQL_DIR } from './frozen.ts';
import { MIGRATIONS } from './index.ts';
import { columnNames, tableExists } from './introspect.ts';
import type { Migration } from './migration.ts';
import { compatibilityFloors } from './window.ts';

const HISTORY = 'schema_migrations';
const LOCK_KEY = 719_884_201;
export const BASE = 'base';

export type Log = (line: string) => void;

/** The revisions a build knows and where their frozen SQL lives (tests pass their own). */
export interface MigrationPlan {
  migrations: readonly Migration[];
  sqlDir: string;
}
export const BUILD_PLAN: MigrationPlan = { migrations: MIGRATIONS, sqlDir: SQL_DIR };
const headOf = (plan: MigrationPlan) => plan.migrations.at(-1)!.id;

async function ensureHistory(sql: RawSql, plan: MigrationPlan) {
  await sql.exec(
    `CREATE TABLE IF NOT EXISTS ${HISTORY} (version VARCHAR(100) PRIMARY KEY, applied_at ${
      sql.dialect === 'postgres'
        ? 'TIMESTAMPTZ NOT NULL DEFAULT now()'
        : "TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ'))"
    })`,
  );
  // kind/min_compatible tell builds that do not know a revision whether they may serve it. Histories
  // written before these columns existed get them, with values filled in for the revisions known here.
  const cols = new Set(await columnNames(sql, HISTORY));
  if (cols.has('min_compatible')) return;
  await sql.exec(`ALTER TABLE ${HISTORY} ADD COLUMN kind VARCHAR(20)`);
  await sql.exec(`ALTER TABLE ${HISTORY} ADD COLUMN min_compatible VARCHAR(100)`);
  const floors = compatibilityFloors(plan.migrations);
  for (const m of plan.migrations)
    await sql.query(`UPDATE ${HISTORY} SET kind = ?, min_compatible = ? WHERE version = ?`, [
      m.kind ?? 'contract',
      floors.get(m.id),
      m.id,
    ]);
}

interface HistoryRow {
  version: string;
  min_compatible: string | null;
}

async function historyRows(sql: RawSql): Promise<HistoryRow[]> {
  if (!(await tableExists(sql, HISTORY))) return [];
  const withFloor = (await columnNames(sql, HISTORY)).includes('min_compatible');
  return sql.query<HistoryRow>(
    `SELECT version, ${withFloor ? 'min_compatible' : 'NULL AS min_compatible'} FROM ${HISTORY}`,
  );
}

export async function appliedVersions(sql: RawSql): Promise<string[]> {
  return (await historyRows(sql)).map((r) => r.version);
}

function revisionOf(plan: MigrationPlan, applied: string[]): string {
  const unknown = applied.filter((v) => !plan.migrations.some((m) => m.id === v));
  if (unknown.length) return unknown.sort().at(-1)!;
  const idx = Math.max(-1, ...applied.map((v) => plan.migrations.findIndex((m) => m.id === v)));
  return idx < 0 ? BASE : plan.migrations[idx]!.id;
}

/** The newest applied revision, `base` when none, or an unknown id when the schema is newer than this build. */
export async function currentRevision(sql: RawSql, plan: MigrationPlan = BUILD_PLAN): Promise<string> {
  return revisionOf(plan, await appliedVersions(sql));
}

export interface Compatibility {
  compatible: boolean;
  current: string;
  required: string;
  reason?: 'too_old' | 'too_new';
  message?: string;
}

/**
 * This build serves a database at its own head, or ahead of it by revisions whose recorded floor
 * (oldest build able to serve them, see window.ts) is a revision this build knows: expand migrations
 * applied by a newer build during a rolling upgrade. Older databases must be upgraded first.
 */
export async function checkCompatibility(
  sql: RawSql,
  plan: MigrationPlan = BUILD_PLAN,
): Promise<Compatibility> {
  const rows = await historyRows(sql);
  const current = revisionOf(
    plan,
    rows.map((r) => r.version),
  );
  const head = headOf(plan);
  const known = (id: string | null) => id !== null && plan.migrations.some((m) => m.id === id);
  const ahead = rows.filter((r) => !known(r.version));
  if (ahead.length) {
    const blockers = ahead.filter((r) => !known(r.min_compatible));
    if (!blockers.length) return { compatible: true, current, required: head };
    const needs = blockers
      .map((r) => r.min_compatible)
      .filter((v): v is string => v !== null)
      .sort()
      .at(-1);
    return {
      compatible: false,
      current,
      required: head,
      reason: 'too_new',
      message: `Database schema revision ${current} is newer than this build (head ${head}) and needs an application at revision ${
        needs ?? current
      } or later (a contract migration removed what older builds use). Upgrade the application, or run \`npm run migrate -- downgrade ${head}\` with the newer build.`,
    };
  }
  if (current !== head)
    return {
      compatible: false,
      current,
      required: head,
      reason: 'too_old',
      message: `Database schema revision ${current} is older than required ${head}. Run \`npm run migrate -- upgrade head\` and restart.`,
    };
  return { compatible: true, current, required: head };
}

const ALTER_COLUMN = /^ALTER TABLE "([^"]+)" (ADD|DROP) COLUMN "([^"]+)"/;

/**
 * Runs one frozen statement. SQLite has no ADD/DROP COLUMN IF [NOT] EXISTS, so those two are checked
 * here (CREATE/DROP TABLE and INDEX carry their own guards), keeping every revision safe to re-run.
 */
async function execFrozen(sql: RawSql, stmt: string) {
  const col = ALTER_COLUMN.exec(stmt);
  if (col) {
    const [, table, op, name] = col;
    const exists = (await tableExists(sql, table!)) && (await columnNames(sql, table!)).includes(name!);
    if (op === 'ADD' ? exists : !exists) return;
  }
  await sql.exec(stmt);
}

async function applyFrozen(sql: RawSql, plan: MigrationPlan, m: Migration, direction: Direction) {
  for (const stmt of readFrozen(sql.dialect, m.id, direction, plan.sqlDir))
    try {
      await execFrozen(sql, stmt);
    } catch (err) {
      (err as Error).message =
        `${m.id} (frozen ${sql.dialect} ${direction} SQL): ${(err as Error).message}. ` +
        `If its description changed before release, re-freeze it: npm run migrate -- freeze ${m.id} --force`;
      throw err;
    }
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

function targetIndex(plan: MigrationPlan, target: string): number {
  if (target === 'head') return plan.migrations.length - 1;
  if (target === BASE) return -1;
  const idx = plan.migrations.findIndex((m) => m.id === target || m.id.split('_')[0] === target);
  if (idx < 0)
    throw new Error(`Unknown revision "${target}". Known: ${plan.migrations.map((m) => m.id).join(', ')}`);
  return idx;
}

export async function upgrade(
  handle: DatabaseHandle,
  target = 'head',
  log: Log = () => {},
  plan: MigrationPlan = BUILD_PLAN,
): Promise<string[]> {
  const goal = targetIndex(plan, target);
  const floors = compatibilityFloors(plan.migrations);
  const done: string[] = [];
  for (let i = 0; i <= goal; i++) {
    const m = plan.migrations[i]!;
    const ran = await locked(handle, async (sql) => {
      await ensureHistory(sql, plan);
      if ((await appliedVersions(sql)).includes(m.id)) return false;
      await applyFrozen(sql, plan, m, 'up');
      await m.data?.(sql);
      await sql.query(
        `INSERT INTO ${HISTORY} (version, kind, min_compatible) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
        [m.id, m.kind ?? 'contract', floors.get(m.id)],
      );
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
  plan: MigrationPlan = BUILD_PLAN,
): Promise<string[]> {
  const current = await currentRevision(handle.sql, plan);
  if (current === BASE) return [];
  const curIdx = plan.migrations.findIndex((m) => m.id === current);
  if (curIdx < 0)
    throw new Error(
      `Current revision ${current} is unknown to this build; downgrade it with the build that created it.`,
    );
  const goal = target === undefined ? curIdx - 1 : targetIndex(plan, target);
  const done: string[] = [];
  for (let i = curIdx; i > goal; i--) {
    const m = plan.migrations[i]!;
    const ran = await locked(handle, async (sql) => {
      if (!(await appliedVersions(sql)).includes(m.id)) return false;
      await applyFrozen(sql, plan, m, 'down');
      await sql.query(`DELETE FROM ${HISTORY} WHERE version = ?`, [m.id]);
      return true;
    });
    if (ran) {
      log(`downgraded ${m.id}`);
      done.push(m.id);
    }
  }
  return done;
}
