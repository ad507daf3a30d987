// The API stack a benchmark measures, started the same way by every benchmark: settings with the bench
// defaults (loopback, a free port, a Temporal address nothing listens on: the client is lazy and never
// connects; or, with `temporal`, that server and an in-process worker), a fresh migrated database
// (SQLite in a temp dir, or a new PostgreSQL database when DATABASE_URL is set, via
// test/support/database.ts), the optional first administrator, the deps, the listening server, and one
// close() that tears it all down in order (server, worker, Temporal client, database, temp database).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { bootstrapAdmin } from '../../bin/bootstrap-admin.ts';
import { buildDeps, connectTemporal, listen, runWorker } from '../../bin/runtime.ts';
import type { RunningWorker } from '../../bin/worker-runtime.ts';
import { loadSettings, type Settings } from '../../config/settings.ts';
import { type DatabaseHandle, openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import type { AppDeps } from '../../services/deps.ts';
import { createLogger } from '../../services/logger.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.ts';
import { type LoggedIn, login } from './login.ts';

/** Where the worker keeps its workflow bundle between runs (the test harness uses the same). */
const WORKER_BUNDLE_CACHE = path.resolve('node_modules/.cache/svc');

/** The administrator the benchmarks bootstrap when they need one. */
export const BENCH_ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };

export interface BenchDatabase {
  database: DatabaseHandle;
  /** The temp database, dropped by close(); undefined for a kept SQLite file. */
  testDb: TestDatabase | undefined;
  /** Closes the database, then drops the temp one. */
  close(): Promise<void>;
}

/** A fresh database migrated to head (no server, no settings): for phases that measure the database alone. */
export async function openBenchDatabase(): Promise<BenchDatabase> {
  const testDb = await createTestDatabase();
  const database = await openDatabase({
    databaseUrl: testDb.databaseUrl ?? '',
    sqlitePath: testDb.sqlitePath,
  });
  await upgrade(database, 'head');
  return { database, testDb, close: () => closeDatabase(database, testDb) };
}

export interface StackOptions {
  /** Settings (environment names) over the bench defaults, e.g. SVC_UPLOAD_AUTH_KEY or LOG_LEVEL. */
  env?: Record<string, string>;
  /** The level of the app's logger (default warn). */
  logLevel?: string;
  /** Bootstrap this administrator right after migrating, and log in as it once listening. */
  admin?: { username: string; password: string };
  /** Keep the SQLite database in this file (not dropped; reused when it exists). Ignored with DATABASE_URL. */
  sqliteFile?: string;
  /** Runs on the built deps before the server listens: seed rows, load data, issue tokens. */
  prepare?: (deps: AppDeps) => Promise<void>;
  /**
   * A Temporal server's address (bench/support/temporal.ts): the stack then connects to it and runs a
   * worker in-process on a task queue of its own, for benchmarks that drive workflows.
   */
  temporal?: string;
}

export interface Stack {
  url: string;
  deps: AppDeps;
  database: DatabaseHandle;
  settings: Settings;
  /** The administrator's session (cookie, token, user), when `admin` was given. */
  admin: LoggedIn | undefined;
  close(): Promise<void>;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const keep = options.sqliteFile && !process.env.DATABASE_URL ? options.sqliteFile : undefined;
  const testDb = keep ? undefined : await createTestDatabase();
  const settings = loadSettings({
    SVC_DATA_DIR: testDb?.dataDir ?? path.dirname(path.resolve(keep!)),
    DATABASE_URL: testDb?.databaseUrl ?? '',
    TEMPORAL_ADDRESS: options.temporal ?? '127.0.0.1:1',
    ...(options.temporal ? { TEMPORAL_TASK_QUEUE: `bench-${randomBytes(4).toString('hex')}` } : {}),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...options.env,
  });
  const database = await openDatabase({
    databaseUrl: settings.DATABASE_URL,
    sqlitePath: keep ? path.resolve(keep) : settings.sqlitePath,
  }).catch(async (err) => {
    await testDb?.drop();
    throw err;
  });
  const temporal = connectTemporal(settings, settings.TEMPORAL_ADDRESS!);
  let api: Awaited<ReturnType<typeof listen>> | undefined;
  let worker: RunningWorker | undefined;
  const close = async () => {
    await api?.close();
    await worker?.stop();
    await temporal.close();
    await closeDatabase(database, testDb);
  };
  try {
    await upgrade(database, 'head');
    if (options.admin) await bootstrapAdmin(database, options.admin, () => {});
    const deps = buildDeps(settings, database, temporal, createLogger(options.logLevel ?? 'warn'));
    await options.prepare?.(deps);
    if (options.temporal)
      worker = await runWorker(settings, options.temporal, database, () => {}, WORKER_BUNDLE_CACHE);
    api = await listen(deps);
    const admin = options.admin
      ? await login(api.url, options.admin.username, options.admin.password)
      : undefined;
    return { url: api.url, deps, database, settings, admin, close };
  } catch (err) {
    // Nothing is left behind when start-up fails: no listener, no temp database.
    await close().catch(() => undefined);
    throw err;
  }
}

async function closeDatabase(database: DatabaseHandle, testDb: TestDatabase | undefined) {
  await database.close();
  await testDb?.drop();
}
