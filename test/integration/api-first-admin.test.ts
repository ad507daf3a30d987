// `npm run api` on an empty database creates the first platform administrator, as `npm start` does
// (bin/api.ts, bin/bootstrap-admin.ts): the migration job prepares the schema, the first API instance
// creates the account and prints its generated password once; a second instance on the same database
// creates nothing and prints no password. Real processes (bin/api.ts, migrations/cli.ts), real database.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { temporalAddress } from '../support/harness.ts';
import { api, login } from '../support/session.ts';

const children: ChildProcess[] = [];
let testDb: TestDatabase | undefined;
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(
    children.map((c) =>
      c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null,
    ),
  );
  await testDb?.drop();
});

const envOf = (db: TestDatabase) => ({
  ...process.env,
  SVC_DATA_DIR: db.dataDir,
  DATABASE_URL: db.databaseUrl ?? '',
  TEMPORAL_ADDRESS: temporalAddress(),
  TEMPORAL_TASK_QUEUE: `first-admin-${randomBytes(4).toString('hex')}`,
  PORT: '0',
  HOST: '127.0.0.1',
  SVC_ENCRYPTION_KEY: 'test-encryption-key',
  SECRET_KEY: 'test-secret-key',
  SVC_UPLOAD_AUTH_KEY: 'test-upload-key',
  SVC_ADMIN_USERNAME: 'first-admin',
  SVC_ADMIN_PASSWORD: '',
});

/** Starts bin/api.ts and waits (on its output, bounded) until it listens; returns its URL and output. */
async function startApi(
  db: TestDatabase,
): Promise<{ url: string; output: () => string; stop: () => Promise<void> }> {
  const env: NodeJS.ProcessEnv = envOf(db);
  delete env.SVC_ADMIN_PASSWORD;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/api.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  const deadline = Date.now() + 90_000;
  while (!/API listening on/.test(out)) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `the API did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: out.match(/API listening on (\S+)/)![1]!,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

test('the first `npm run api` on an empty database creates the administrator; the next one does not', async () => {
  testDb = await createTestDatabase();
  // The migration job (production's separate step): schema only, no account.
  const migrate = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'migrations/cli.ts', 'upgrade', 'head'],
    { env: envOf(testDb) },
  );
  assert.doesNotMatch(migrate.stdout, /administrator/);

  const first = await startApi(testDb);
  const printed = first.output().match(/Created administrator "first-admin" with generated password: (\S+)/);
  assert.ok(printed, first.output());
  const password = printed[1]!;
  const admin = await login(first.url, 'first-admin', password);
  assert.equal(admin.user.role, 'platform_admin');
  // A generated password must be changed at first login: the API says so, and refuses other work.
  assert.equal(admin.user.must_change_password, true);

  const second = await startApi(testDb);
  assert.doesNotMatch(second.output(), /Created administrator|generated password/);
  assert.equal(second.output().includes(password), false, 'the password is printed once, by one instance');
  const again = await api(second.url, 'POST', '/api/auth/login', {
    body: { username: 'first-admin', password },
  });
  assert.equal(again.status, 200, 'the second instance serves the same account');
  await Promise.all([first.stop(), second.stop()]);
});
