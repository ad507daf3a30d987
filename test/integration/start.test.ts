// `npm start` as a user runs it: fresh data dir to ready, Ctrl-C, a hard kill and restart losing no
// committed row and no running workflow, and the production guards.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { openDatabase } from '../../db/client.ts';
import { downgrade, upgrade } from '../../migrations/runner.ts';
import { finishProbeSignal, probeWorkflow } from '../../workflows/probe.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

interface Started {
  child: ChildProcess;
  url: string;
  temporal: string;
  output: () => string;
}

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
});
after(() => testDb.drop());

const baseEnv = (extra: Record<string, string> = {}) => ({
  ...process.env,
  SVC_DATA_DIR: testDb.dataDir,
  DATABASE_URL: testDb.databaseUrl ?? '',
  PORT: '0',
  SVC_TEMPORAL_DEV_PORT: '0',
  SVC_ADMIN_PASSWORD: 'admin-password-123',
  LOG_LEVEL: 'warn',
  TEMPORAL_ADDRESS: '',
  ...extra,
});

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; output: () => string; exited: Promise<number> } {
  // Own process group, like a terminal's foreground job: Ctrl-C is a SIGINT to the whole group.
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  const exited = new Promise<number>((resolve) =>
    child.on('exit', (code, sig) => resolve(code ?? (sig === 'SIGKILL' ? 137 : 1))),
  );
  return { child, output: () => out, exited };
}

async function startService(
  cmd = process.execPath,
  args = ['--import', 'tsx', 'bin/start.ts'],
): Promise<Started> {
  const p = run(cmd, args, baseEnv());
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const out = p.output();
    const url = out.match(/API listening on (\S+)/)?.[1];
    const temporal = out.match(/\(server (\S+)\)/)?.[1];
    if (url && temporal && /ready in/.test(out)) return { child: p.child, url, temporal, output: p.output };
    if (p.child.exitCode !== null) throw new Error(`start exited early: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  p.child.kill('SIGKILL');
  throw new Error(`start did not become ready: ${p.output()}`);
}

const temporalPid = () => Number(readFileSync(path.join(testDb.dataDir, 'temporal-dev.pid'), 'utf8'));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('npm start from a fresh data dir reaches ready, and Ctrl-C stops everything', async () => {
  const s = await startService('npm', ['start']);
  assert.match(s.output(), /Temporal UI on http:\/\/127\.0\.0\.1:\d+/);
  const ready = await fetch(`${s.url}/readyz`);
  assert.equal(ready.status, 200, await ready.text());
  const tpid = temporalPid();
  assert.ok(alive(tpid));
  const exited = new Promise((r) => s.child.on('exit', r));
  process.kill(-s.child.pid!, 'SIGINT'); // Ctrl-C
  await exited;
  // npm itself dies of the SIGINT; the service below it shuts down in order and says so.
  assert.match(s.output(), /SIGINT received, shutting down[\s\S]*\[svc\] stopped/);
  for (let i = 0; i < 50 && alive(tpid); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(!alive(tpid), 'embedded Temporal server stopped with it');
});

test('kill -9 then restart loses no committed row and no running workflow', async () => {
  const first = await startService();
  const db = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await db.sql.query(`INSERT INTO tenants (name, slug) VALUES (?, ?)`, ['Durable', 'durable']);
  await db.close();
  let conn = await Connection.connect({ address: first.temporal });
  const workflowId = `probe-durable-${Date.now()}`;
  await new Client({ connection: conn }).workflow.start(probeWorkflow, {
    taskQueue: 'svc',
    workflowId,
    args: [{ message: 'durable', waitForSignal: true }],
  });
  await conn.close();

  const tpid = temporalPid();
  first.child.kill('SIGKILL');
  process.kill(tpid, 'SIGKILL');
  await new Promise((r) => first.child.once('exit', r));

  const second = await startService();
  try {
    const db2 = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
    const rows = await db2.sql.query<{ name: string }>(`SELECT name FROM tenants WHERE slug = ?`, [
      'durable',
    ]);
    await db2.close();
    assert.deepEqual(
      rows.map((r) => r.name),
      ['Durable'],
    );
    conn = await Connection.connect({ address: second.temporal });
    const handle = new Client({ connection: conn }).workflow.getHandle(workflowId);
    await handle.signal(finishProbeSignal, '!');
    assert.equal(await handle.result(), 'echo: durable!');
    await conn.close();
  } finally {
    process.kill(-second.child.pid!, 'SIGINT');
    await new Promise((r) => second.child.once('exit', r));
  }
});

test('production refuses to start without SVC_ENCRYPTION_KEY and SECRET_KEY', async () => {
  const p = run(
    process.execPath,
    ['--import', 'tsx', 'bin/start.ts'],
    baseEnv({ NODE_ENV: 'production', SVC_ENCRYPTION_KEY: '', SECRET_KEY: '' }),
  );
  assert.notEqual(await p.exited, 0);
  assert.match(p.output(), /Refusing to start in production without SVC_ENCRYPTION_KEY and SECRET_KEY/);
});

test('production never migrates and refuses a schema outside the window', async () => {
  const db = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(db, 'head');
  const [rolledBack] = await downgrade(db);
  const p = run(
    process.execPath,
    ['--import', 'tsx', 'bin/start.ts'],
    baseEnv({ NODE_ENV: 'production', SVC_ENCRYPTION_KEY: 'k', SECRET_KEY: 's' }),
  );
  const code = await p.exited;
  assert.notEqual(code, 0);
  assert.match(p.output(), /older than required .*npm run migrate -- upgrade head/);
  const applied = await db.sql.query<{ version: string }>(
    `SELECT version FROM schema_migrations WHERE version = ?`,
    [rolledBack!],
  );
  assert.equal(applied.length, 0, 'no DDL ran at startup');
  await upgrade(db, 'head');
  await db.close();
  assert.ok(!existsSync(path.join(testDb.dataDir, 'temporal-dev.pid')), 'nothing was started');
});
