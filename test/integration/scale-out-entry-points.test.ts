// `npm run api` and `npm run worker` as separate processes against one database and one Temporal
// server: the API is ready once the separate worker polls, both stop cleanly, and neither migrates.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { temporalAddress } from '../support/harness.ts';
import { sourceEntry } from '../support/node-entry.ts';
import { workerPolls } from '../support/readiness.ts';
import { shareWorkflowBundle } from '../support/svc-processes.ts';

let testDb: TestDatabase;
const children: ChildProcess[] = [];

before(async () => {
  testDb = await createTestDatabase();
  // The worker reads the workflow bundle the test files share instead of bundling it again.
  await shareWorkflowBundle(testDb.dataDir);
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await testDb.drop();
});

// The same command `npm run api|worker` runs, without npm in between (npm dies of a SIGTERM itself).
function launch(script: 'api' | 'worker', env: Record<string, string>) {
  const child = spawn(process.execPath, sourceEntry(`bin/${script}.ts`), {
    env: {
      ...process.env,
      SVC_DATA_DIR: testDb.dataDir,
      DATABASE_URL: testDb.databaseUrl ?? '',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, output: () => out, exited };
}

async function waitFor(pred: () => boolean | Promise<boolean>, what: string, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await pred()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('api and worker need TEMPORAL_ADDRESS and never migrate', async () => {
  const noTemporal = launch('api', { TEMPORAL_ADDRESS: '' });
  assert.notEqual(await noTemporal.exited, 0);
  assert.match(noTemporal.output(), /needs TEMPORAL_ADDRESS/);
  const unmigrated = launch('worker', { TEMPORAL_ADDRESS: temporalAddress() });
  assert.notEqual(await unmigrated.exited, 0);
  assert.match(unmigrated.output(), /npm run migrate -- upgrade head/);
});

test('a separate worker makes the separate API ready; both stop on SIGTERM', async () => {
  const db = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(db, 'head');
  await db.close();
  const env = {
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_TASK_QUEUE: `scale-${randomBytes(4).toString('hex')}`,
  };
  const api = launch('api', env);
  await waitFor(() => /API listening on/.test(api.output()), 'the API to listen');
  const url = api.output().match(/API listening on (\S+)/)![1]!;
  // Ready without a worker (chat, output, the agent and the model proxy serve); background reported.
  const before = await fetch(`${url}/readyz`);
  assert.equal(before.status, 200);
  assert.equal(((await before.json()) as any).checks.background_services.status, 'unavailable');
  const worker = launch('worker', env);
  await waitFor(() => workerPolls(url), 'readyz 200 with the worker polling');
  api.child.kill('SIGTERM');
  worker.child.kill('SIGTERM');
  assert.equal(await api.exited, 0);
  assert.equal(await worker.exited, 0);
});
