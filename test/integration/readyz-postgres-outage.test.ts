// /readyz goes 503 while PostgreSQL is stopped and back to 200 once it is started again, without
// restarting the service (runs in every test run: it brings its own private PostgreSQL).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';

let pg: PrivatePostgres;
let app: TestApp;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-outage-'));

before(async () => {
  pg = await createPrivatePostgres();
  app = await startTestApp({
    worker: true,
    testDb: { dialect: 'postgres', databaseUrl: pg.url, sqlitePath: '', dataDir, drop: async () => {} },
  });
});
after(async () => {
  await app?.close();
  pg?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

const readyz = async () => {
  const res = await fetch(`${app.url}/readyz`);
  return { status: res.status, body: (await res.json()) as any };
};

test('readyz follows PostgreSQL down and up again', async () => {
  assert.equal(app.database.dialect, 'postgres');
  const up = await readyz();
  assert.equal(up.status, 200, JSON.stringify(up.body));

  pg.stop();
  const down = await readyz();
  assert.equal(down.status, 503);
  assert.equal(down.body.checks.database.status, 'fail');
  assert.equal(down.body.checks.schema_version.status, 'fail');
  assert.equal((await fetch(`${app.url}/livez`)).status, 200, 'liveness unaffected');
  assert.match(await (await fetch(`${app.url}/metrics`)).text(), /svc_database_up 0/);

  pg.start();
  let back = await readyz();
  for (let i = 0; i < 40 && back.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 250));
    back = await readyz();
  }
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal(back.body.checks.database.status, 'ok');
});
