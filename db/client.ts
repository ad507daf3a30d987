// Opens the database for either dialect and hands out one typed surface: drizzle for queries (typed
// against the PostgreSQL definitions, see sqlite-tables.ts) and `sql` for the few raw statements the
// migration runner and health checks need.

import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { drizzle as drizzlePg, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pgPkg from 'pg';
import * as pgTables from './schema/index.ts';
import { deriveSqliteTables } from './sqlite-tables.ts';

export type Dialect = 'sqlite' | 'postgres';
export type Tables = typeof pgTables;

/** Raw SQL access. Placeholders are `?`; they are rewritten to `$n` for PostgreSQL. */
export interface RawSql {
  dialect: Dialect;
  exec(statements: string): Promise<void>;
  query<T = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions): Promise<T[]>;
}

export interface QueryOptions {
  /**
   * PostgreSQL: run as a named prepared statement, parsed and planned once per connection (a few
   * hundred microseconds saved on a multi-join query). For hot statements with constant text only.
   * SQLite keeps every statement prepared anyway.
   */
  prepared?: boolean;
}

export interface DatabaseHandle {
  dialect: Dialect;
  db: NodePgDatabase<Record<string, never>>;
  t: Tables;
  sql: RawSql;
  /** Runs `fn` on one connection inside a transaction (serialised process-wide on SQLite). */
  transaction<T>(
    fn: (tx: { db: NodePgDatabase<Record<string, never>>; sql: RawSql }) => Promise<T>,
  ): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL pool (for LISTEN/NOTIFY); undefined on SQLite. */
  pool?: pgPkg.Pool;
  /** SQLite: the database file (a second connection, e.g. a writer thread's, opens it); undefined on PostgreSQL. */
  file?: string;
}

// pg returns BIGINT as string by default; our counters stay below 2^53, so read them as numbers.
pgPkg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

const numbered = (text: string) => {
  let i = 0;
  return text.replace(/\?/g, () => `$${++i}`);
};

export async function openDatabase(opts: {
  databaseUrl?: string;
  sqlitePath?: string;
  /** PostgreSQL: the most connections the pool opens (SVC_DB_POOL_MAX; default 10). */
  poolMax?: number;
}): Promise<DatabaseHandle> {
  if (opts.databaseUrl && /^postgres(ql)?:\/\//.test(opts.databaseUrl))
    return openPostgres(opts.databaseUrl, opts.poolMax ?? DEFAULT_POOL_MAX);
  return openSqlite(opts.sqlitePath ?? './data/svc.sqlite');
}

function openSqlite(file: string): DatabaseHandle {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const conn = new Database(file);
  // WAL + NORMAL survives a process kill without losing committed rows; busy_timeout lets a second
  // process (migrate CLI, a test) wait for the lock instead of failing at once.
  conn.pragma('journal_mode = WAL');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('busy_timeout = 5000');
  conn.pragma('foreign_keys = ON');
  const t = deriveSqliteTables();
  const db = drizzleSqlite(conn) as unknown as NodePgDatabase<Record<string, never>>;
  // Preparing is most of the cost of a small statement (the model proxy runs a few per call), so
  // prepared statements are kept by their text. SQLite re-prepares one by itself after a schema change.
  const prepared = new Map<string, Database.Statement>();
  const prepare = (text: string) => {
    let stmt = prepared.get(text);
    if (stmt === undefined) {
      stmt = conn.prepare(text);
      if (prepared.size >= 500) prepared.clear();
      prepared.set(text, stmt);
    }
    return stmt;
  };
  const sql: RawSql = {
    dialect: 'sqlite',
    async exec(statements) {
      conn.exec(statements);
    },
    async query(text, params = []) {
      const stmt = prepare(text);
      const args = params.map((p) =>
        typeof p === 'boolean' ? (p ? 1 : 0) : p instanceof Date ? p.getTime() : p,
      );
      if (stmt.reader) return stmt.all(...args) as any[];
      stmt.run(...args);
      return [];
    },
  };
  // better-sqlite3 is synchronous and single-connection: an async transaction must not interleave with
  // another one, so transactions queue behind each other.
  let chain: Promise<unknown> = Promise.resolve();
  return {
    dialect: 'sqlite',
    db,
    t,
    sql,
    file,
    transaction(fn) {
      const run = chain.then(async () => {
        conn.exec('BEGIN IMMEDIATE');
        try {
          const out = await fn({ db, sql });
          conn.exec('COMMIT');
          return out;
        } catch (err) {
          if (conn.inTransaction) conn.exec('ROLLBACK');
          throw err;
        }
      });
      chain = run.catch(() => undefined);
      return run;
    },
    async ping() {
      conn.prepare('select 1').get();
    },
    async close() {
      conn.close();
    },
  };
}

/** Names of prepared statements by their text (the same name on every connection). */
const statementNames = new Map<string, { name: string; text: string }>();
const preparedStatement = (text: string) => {
  let s = statementNames.get(text);
  if (s === undefined) {
    s = { name: `svc_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text: numbered(text) };
    statementNames.set(text, s);
  }
  return s;
};

function pgRaw(runner: {
  query: (text: string | pgPkg.QueryConfig, params?: unknown[]) => Promise<pgPkg.QueryResult<any>>;
}): RawSql {
  return {
    dialect: 'postgres',
    async exec(statements) {
      await runner.query(statements);
    },
    async query(text, params = [], options) {
      if (options?.prepared) {
        const { name, text: numberedText } = preparedStatement(text);
        return (await runner.query({ name, text: numberedText, values: params })).rows;
      }
      const res = await runner.query(numbered(text), params);
      return res.rows;
    },
  };
}

/** Connections per process when SVC_DB_POOL_MAX is not set. */
export const DEFAULT_POOL_MAX = 10;

function openPostgres(url: string, poolMax: number): DatabaseHandle {
  // A new backend can take seconds to start on a loaded 2-core host (40 logins at once, each holding
  // a bcrypt thread); 5 s made such bursts answer 500. Waiting longer is the better failure mode.
  const pool = new pgPkg.Pool({ connectionString: url, max: poolMax, connectionTimeoutMillis: 15_000 });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  // Nor a checked-out one between two queries (a transaction, a streamed upload): the pool removes its
  // idle listener while a client is lent, so a kill -9 of PostgreSQL ("terminating connection due to
  // unexpected postmaster exit") was an unhandled 'error' event that ended the process. The next query
  // on that client fails instead, and the pool drops it (test/integration/chaos/postgres-kill.test.ts).
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = drizzlePg(pool);
  return {
    dialect: 'postgres',
    db,
    t: pgTables,
    sql: pgRaw(pool),
    pool,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn({ db: drizzlePg(client) as any, sql: pgRaw(client) });
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async ping() {
      await pool.query('select 1');
    },
    async close() {
      await pool.end();
    },
  };
}
