// Rolling upgrades (document 2 "Versioning" 4-5): this build keeps serving a database that a newer build
// has expanded (one revision ahead that adds a table and a nullable column), and refuses one that a newer
// build has contracted, naming the revisions. The newer build is simulated honestly: its extra revisions
// exist only as frozen SQL in a copy of migrations/sql that the runner applies; this build's migration
// list does not know them.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { prepareDatabase, StartupError } from '../../bin/startup.ts';
import { DIALECTS, formatStatements, frozenName, SQL_DIR } from '../../migrations/frozen.ts';
import { HEAD, MIGRATIONS, MIN_COMPATIBLE } from '../../migrations/index.ts';
import type { Migration } from '../../migrations/migration.ts';
import { checkCompatibility, downgrade, type MigrationPlan, upgrade } from '../../migrations/runner.ts';
import { PASSWORD, uniqueName } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

const EXPAND: Migration = {
  id: '9001_window_probe_expand',
  description: 'probe table and column',
  kind: 'expand',
};
const CONTRACT: Migration = {
  id: '9002_window_probe_contract',
  description: 'drops the probe',
  kind: 'contract',
};
const SQL: Record<string, { up: string[]; down: string[] }> = {
  [EXPAND.id]: {
    up: [
      'CREATE TABLE IF NOT EXISTS "window_probe" ("id" INTEGER PRIMARY KEY, "note" TEXT)',
      'ALTER TABLE "users" ADD COLUMN "window_probe_note" TEXT',
    ],
    down: ['ALTER TABLE "users" DROP COLUMN "window_probe_note"', 'DROP TABLE IF EXISTS "window_probe"'],
  },
  [CONTRACT.id]: {
    up: ['DROP TABLE IF EXISTS "window_probe"'],
    down: ['CREATE TABLE IF NOT EXISTS "window_probe" ("id" INTEGER PRIMARY KEY, "note" TEXT)'],
  },
};

let app: TestApp;
let admin: Session;
let sqlDir: string;
let newer: MigrationPlan;

before(async () => {
  app = await startTestApp({ worker: true });
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  sqlDir = mkdtempSync(path.join(os.tmpdir(), 'newer-build-sql-'));
  cpSync(SQL_DIR, sqlDir, { recursive: true });
  for (const [id, dirs] of Object.entries(SQL))
    for (const d of DIALECTS)
      for (const dir of ['up', 'down'] as const)
        writeFileSync(path.join(sqlDir, frozenName(d, id, dir)), formatStatements([id], dirs[dir]));
  newer = { migrations: [...MIGRATIONS, EXPAND, CONTRACT], sqlDir };
});
after(async () => {
  await app?.close();
  rmSync(sqlDir, { recursive: true, force: true });
});

const readyz = async () => {
  const res = await fetch(`${app.url}/readyz`);
  return { status: res.status, body: (await res.json()) as any };
};

test('a database one expand migration ahead is accepted and the API keeps serving', async () => {
  assert.deepEqual(await upgrade(app.database, EXPAND.id, undefined, newer), [EXPAND.id]);
  const [row] = await app.database.sql.query<{ kind: string; min_compatible: string }>(
    'SELECT kind, min_compatible FROM schema_migrations WHERE version = ?',
    [EXPAND.id],
  );
  assert.deepEqual({ ...row }, { kind: 'expand', min_compatible: MIN_COMPATIBLE }, 'expand keeps the floor');

  assert.deepEqual(await checkCompatibility(app.database.sql), {
    compatible: true,
    current: EXPAND.id,
    required: HEAD,
  });
  const ready = await readyz();
  assert.equal(ready.status, 200, JSON.stringify(ready.body));
  assert.deepEqual(ready.body.checks.schema_version, {
    status: 'ok',
    compatible: true,
    current: EXPAND.id,
    required: HEAD,
  });
  // Real requests against the table the newer build widened: insert (unknown column left NULL) and list.
  const name = uniqueName('rolling');
  const created = await api(app.url, 'POST', '/api/admin/users', {
    auth: admin,
    body: { username: name, password: PASSWORD },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const list = await api(app.url, 'GET', '/api/admin/users', { auth: admin });
  assert.equal(list.status, 200);
  assert.ok(list.body.users.some((u: any) => u.id === created.body.user_id && u.username === name));
  await login(app.url, name, PASSWORD);
  // And a fresh start of this build against that database is allowed.
  const db = await prepareDatabase(app.settings, { migrate: false, log: () => {} });
  await db.close();
});

test('a contract migration ahead is refused by startup and readiness, naming the revisions', async () => {
  assert.deepEqual(await upgrade(app.database, 'head', undefined, newer), [CONTRACT.id]);
  const message = `Database schema revision ${CONTRACT.id} is newer than this build (head ${HEAD}) and needs an application at revision ${EXPAND.id} or later (a contract migration removed what older builds use). Upgrade the application, or run \`npm run migrate -- downgrade ${HEAD}\` with the newer build.`;
  assert.deepEqual(await checkCompatibility(app.database.sql), {
    compatible: false,
    current: CONTRACT.id,
    required: HEAD,
    reason: 'too_new',
    message,
  });
  const ready = await readyz();
  assert.equal(ready.status, 503);
  assert.deepEqual(ready.body.checks.schema_version, {
    status: 'fail',
    compatible: false,
    current: CONTRACT.id,
    required: HEAD,
  });
  await assert.rejects(
    prepareDatabase(app.settings, { migrate: false, log: () => {} }),
    (err: Error) =>
      err instanceof StartupError && err.message === `${message} (current ${CONTRACT.id}, required ${HEAD})`,
  );

  // The newer build rolls back to this build's head: served again.
  assert.deepEqual(await downgrade(app.database, HEAD, undefined, newer), [CONTRACT.id, EXPAND.id]);
  assert.equal((await readyz()).status, 200);
});

test('an unknown revision recorded without its window (older runner) is refused', async () => {
  await app.database.sql.query('INSERT INTO schema_migrations (version) VALUES (?)', ['9003_unrecorded']);
  const c = await checkCompatibility(app.database.sql);
  assert.equal(c.compatible, false);
  assert.equal(c.reason, 'too_new');
  assert.match(c.message!, /needs an application at revision 9003_unrecorded or later/);
  await app.database.sql.query('DELETE FROM schema_migrations WHERE version = ?', ['9003_unrecorded']);
  assert.equal((await checkCompatibility(app.database.sql)).compatible, true);
});
