// The stack the autonomous-workflow benchmark drives, as production runs it on one node: a Temporal dev
// server (in memory, free ports), a fresh migrated database (SQLite in a temp dir, or a new PostgreSQL
// database when DATABASE_URL is set), the API and the Temporal worker in this process with logs at
// `warn` (not the tests' in-memory debug capture, which would be part of the measured cost), the mock
// model provider (test/fixtures/mock-provider.ts) behind a tenant's stored Anthropic key, the scripted
// fake CLI (test/fixtures/fake-autonomous-cli.mjs) as cli_beta, and project repositories under the
// project roots (`<data dir>/projects`), one per workflow, each with a `.svc/ci` and a step script.
//
// Several users own the workflows (round robin) so that the global `agent_max_concurrent_workflows`
// is the limit that queues them, not the tenant's `max_sessions_per_user` (default 5).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bootstrapAdmin } from '../../bin/bootstrap-admin.ts';
import { buildDeps, connectTemporal, listen, runWorker } from '../../bin/runtime.ts';
import { findTemporalCli } from '../../bin/temporal-cli.ts';
import { type DevServer, startDevServer } from '../../bin/temporal-dev.ts';
import type { RunningWorker } from '../../bin/worker-runtime.ts';
import { loadSettings, type Settings } from '../../config/settings.ts';
import { type DatabaseHandle, openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import { tenantProjectRoot } from '../../services/autonomous/projects.ts';
import type { AppDeps } from '../../services/deps.ts';
import { createLogger } from '../../services/logger.ts';
import { type MockProvider, startMockProvider } from '../../test/fixtures/mock-provider.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.ts';
import { api, login, type Session } from '../../test/support/session.ts';

export const FAKE_CLI = path.resolve(import.meta.dirname, '../../test/fixtures/fake-autonomous-cli.mjs');
const ADMIN = { username: 'bench-admin', password: 'bench-admin-password' };
const USER_PASSWORD = 'bench-user-password-1';
/** The workflow bundle is built once per source change, shared with the tests. */
const BUNDLE_CACHE = path.resolve(import.meta.dirname, '../../node_modules/.cache/svc');

/** The fast script: every CLI step makes one model call through the proxy and answers; no sleeps. */
export function fastScript(): Record<string, { steps: unknown[] }> {
  const say = (text: string) => ({ steps: [{ call: 1 }, { text }] });
  return {
    plan: say('1. write app.txt with the word fixed'),
    plan_review: say('The plan is fine.\nVERDICT: approved'),
    implementation: {
      steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'fixed\n' } }, { text: 'implemented' }],
    },
    test: say('tests pass'),
    pr_review: say('Looks good.\nVERDICT: approved'),
    report: say('Summary: app.txt now says fixed.'),
    ci_diagnosis: {
      steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'fixed\n' } }, { text: 'repaired' }],
    },
    conflict_repair: say('resolved'),
    acceptance_verification: say('The requirement is met.\nVERDICT: confirmed'),
  };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@x',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@x',
    },
  }).toString();

export interface BenchWorld {
  url: string;
  settings: Settings;
  database: DatabaseHandle;
  deps: AppDeps;
  mock: MockProvider;
  temporal: DevServer;
  tenantId: number;
  /** Sessions of the users that own the workflows (round robin). */
  users: (Session & { id: number })[];
  /** A new committed project repository under the project roots (`<name>-<n>`), CI = `.svc/ci` checking app.txt. */
  project(name: string): string;
  close(): Promise<void>;
}

export interface WorldOptions {
  /** agent_max_concurrent_workflows; undefined = the setting's default (10). */
  maxConcurrent?: number;
  users: number;
  log: (line: string) => void;
}

export async function startBenchWorld(opts: WorldOptions): Promise<BenchWorld> {
  const cliPath = await findTemporalCli({ explicit: process.env.TEMPORAL_CLI_PATH, log: opts.log });
  const temporal = await startDevServer({ cliPath, ephemeralPorts: true, inMemory: true });
  const cleanups: (() => Promise<unknown>)[] = [() => temporal.stop()];
  const close = async () => {
    for (const c of cleanups.reverse())
      await c().catch((err) => opts.log(`cleanup: ${(err as Error).message}`));
  };
  try {
    const testDb: TestDatabase = await createTestDatabase();
    cleanups.push(() => testDb.drop());
    const settings = loadSettings({
      SVC_DATA_DIR: testDb.dataDir,
      DATABASE_URL: testDb.databaseUrl ?? '',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: `bench-autonomous-${randomBytes(4).toString('hex')}`,
      SVC_TEMPORAL_DEV_PORT: '0',
      SVC_TEMPORAL_UI_PORT: '0',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SVC_ENCRYPTION_KEY: `bench-${randomBytes(16).toString('hex')}`,
      SECRET_KEY: `bench-${randomBytes(16).toString('hex')}`,
    });
    if (opts.maxConcurrent !== undefined)
      settings.autonomous.agent_max_concurrent_workflows = opts.maxConcurrent;
    const database = await openDatabase({
      databaseUrl: settings.DATABASE_URL,
      sqlitePath: settings.sqlitePath,
    });
    cleanups.push(() => database.close());
    await upgrade(database, 'head');
    await bootstrapAdmin(database, ADMIN, () => {});
    const client = connectTemporal(settings, settings.TEMPORAL_ADDRESS!);
    cleanups.push(() => client.close());
    const deps = buildDeps(settings, database, client, createLogger('warn'));
    const worker: RunningWorker = await runWorker(
      settings,
      settings.TEMPORAL_ADDRESS!,
      database,
      () => {},
      BUNDLE_CACHE,
    );
    cleanups.push(() => worker.stop());
    const server = await listen(deps);
    cleanups.push(() => server.close());
    // The CLIs reach the proxy at the API's real address (known only after listen); cli_beta is the fake.
    settings.autonomous.proxy_base_url = server.url;
    settings.autonomous.cli_paths = { cli_beta: FAKE_CLI };

    const mock = await startMockProvider();
    cleanups.push(() => mock.close());
    const admin = await login(server.url, ADMIN.username, ADMIN.password);
    const tenantName = `bench-${randomBytes(3).toString('hex')}`;
    const tenant = await api(server.url, 'POST', '/api/tenants', {
      auth: admin,
      body: { name: tenantName, slug: tenantName },
    });
    if (tenant.status !== 201)
      throw new Error(`create tenant: ${tenant.status} ${JSON.stringify(tenant.body)}`);
    const tenantId: number = tenant.body.tenant.id;
    const key = await api(server.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        provider: 'anthropic',
        key_name: 'bench key',
        api_key: `bench-anthropic-key-${randomBytes(8).toString('hex')}`,
        base_url: mock.url,
        tenant_id: tenantId,
      },
    });
    if (key.status !== 201) throw new Error(`store key: ${key.status} ${JSON.stringify(key.body)}`);
    const users: BenchWorld['users'] = [];
    for (let i = 0; i < opts.users; i++) {
      const username = `bench-user-${i}-${randomBytes(2).toString('hex')}`;
      const u = await api(server.url, 'POST', '/api/admin/users', {
        auth: admin,
        body: {
          username,
          password: USER_PASSWORD,
          role: 'user',
          tenant_id: tenantId,
          email: `${username}@example.test`,
        },
      });
      if (u.status !== 201) throw new Error(`create user: ${u.status} ${JSON.stringify(u.body)}`);
      users.push({ ...(await login(server.url, username, USER_PASSWORD)), id: u.body.user_id });
    }

    // The tenant's own folder under the default root (services/autonomous/projects.ts).
    const root = tenantProjectRoot(path.join(settings.SVC_DATA_DIR, 'projects'), tenantId);
    let projects = 0;
    return {
      url: server.url,
      settings,
      database,
      deps,
      mock,
      temporal,
      tenantId,
      users,
      project(name) {
        const dir = path.join(root, `${name}-${++projects}`);
        mkdirSync(path.join(dir, '.svc-fake'), { recursive: true });
        mkdirSync(path.join(dir, '.svc'), { recursive: true });
        git(dir, 'init', '-q', '-b', 'main');
        writeFileSync(path.join(dir, 'app.txt'), 'broken\n');
        writeFileSync(
          path.join(dir, 'ci.sh'),
          'grep -q fixed app.txt || { echo "app.txt is not fixed"; exit 1; }\n',
        );
        writeFileSync(path.join(dir, '.svc', 'ci'), 'sh ci.sh\n');
        writeFileSync(path.join(dir, '.svc-fake', 'script.json'), JSON.stringify({ byStep: fastScript() }));
        git(dir, 'add', '-A');
        git(dir, 'commit', '-q', '-m', 'initial');
        return dir;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
