// Starts the real API (real database, real Temporal dev server from test/run.ts, real HTTP on a free
// port) for one test file. Logs are captured so tests can assert that no secret was ever logged.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { bootstrapAdmin } from '../../bin/bootstrap-admin.ts';
import { buildDeps, connectTemporal, listen, runWorker } from '../../bin/runtime.ts';
import type { RunningWorker } from '../../bin/worker-runtime.ts';
import { loadSettings, type Settings } from '../../config/settings.ts';
import { type DatabaseHandle, openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import type { AppDeps } from '../../services/deps.ts';
import { createLogger } from '../../services/logger.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

/** Shared across test files so the workflow bundle is built once per source change. */
const BUNDLE_CACHE = path.resolve('node_modules/.cache/svc');

export const ADMIN = { username: 'admin', password: 'admin-password-123' };

/** A clock tests can move forward instead of waiting. */
export class TestClock {
  offsetMs = 0;
  now = () => new Date(Date.now() + this.offsetMs);
  advance(ms: number) {
    this.offsetMs += ms;
  }
}

export interface TestApp {
  url: string;
  deps: AppDeps;
  database: DatabaseHandle;
  settings: Settings;
  clock: TestClock;
  logs: string[];
  worker?: RunningWorker;
  testDb: TestDatabase;
  close(): Promise<void>;
}

export function temporalAddress(): string {
  const a = process.env.TEST_TEMPORAL_ADDRESS;
  if (!a)
    throw new Error(
      'TEST_TEMPORAL_ADDRESS is not set: run tests with `npm test` (it starts the Temporal dev server)',
    );
  return a;
}

export async function startTestApp(
  opts: { worker?: boolean; env?: Record<string, string>; testDb?: TestDatabase; migrate?: boolean } = {},
): Promise<TestApp> {
  const testDb = opts.testDb ?? (await createTestDatabase({ migrated: opts.migrate !== false }));
  const taskQueue = `test-${randomBytes(4).toString('hex')}`;
  const settings = loadSettings({
    SVC_DATA_DIR: testDb.dataDir,
    DATABASE_URL: testDb.databaseUrl ?? '',
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_TASK_QUEUE: taskQueue,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    SVC_ENCRYPTION_KEY: 'test-encryption-key',
    SECRET_KEY: 'test-secret-key',
    SVC_UPLOAD_AUTH_KEY: 'test-upload-key',
    // Run any suite with the proxy's accounting on the writer thread (issue 31 item 1).
    ...(process.env.SVC_PROXY_ACCOUNTING ? { SVC_PROXY_ACCOUNTING: process.env.SVC_PROXY_ACCOUNTING } : {}),
    ...opts.env,
  });
  const database = await openDatabase({
    databaseUrl: settings.DATABASE_URL,
    sqlitePath: settings.sqlitePath,
    poolMax: settings.SVC_DB_POOL_MAX,
  });
  if (opts.migrate !== false) await upgrade(database, 'head');
  await bootstrapAdmin(database, { username: ADMIN.username, password: ADMIN.password }, () => {});
  const logs: string[] = [];
  // Kept as the strings pino writes (no round trip through a Buffer for every debug line).
  const sink = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, cb) {
      logs.push(typeof chunk === 'string' ? chunk : chunk.toString());
      cb();
    },
  });
  const logger: Logger = createLogger('debug', sink);
  const temporal = connectTemporal(settings, settings.TEMPORAL_ADDRESS!);
  const deps = buildDeps(settings, database, temporal, logger);
  const clock = new TestClock();
  deps.now = clock.now;
  const worker = opts.worker
    ? await runWorker(settings, settings.TEMPORAL_ADDRESS!, database, (l) => logs.push(l), BUNDLE_CACHE)
    : undefined;
  const api = await listen(deps);
  return {
    url: api.url,
    deps,
    database,
    settings,
    clock,
    logs,
    worker,
    testDb,
    async close() {
      await api.close();
      await worker?.stop();
      await temporal.close();
      await database.close();
      if (!opts.testDb) await testDb.drop();
    },
  };
}
