// tenants.user_count as a maintained figure (follow-up of issue 10 item 1): migration 0026 sets it once
// for tenants written before it was kept (soft-deleted users excluded, deactivated ones included);
// the tenants API (detail, list, check-quota, stats) reads the column rather than counting live; user
// create, tenant move and soft delete through the admin users API keep it; max_users is still
// enforced and frees a seat when a user is deleted or moved away. The create/move/delete/scope
// basics are in tenant-user-count.test.ts; this file covers what reads and sets the column.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../db/client.ts';
import { MIGRATIONS } from '../../migrations/index.ts';
import { upgrade } from '../../migrations/runner.ts';
import { buildCast, type Cast, createTenant, createUser, uniqueName } from '../support/actors.ts';
import { createTestDatabase } from '../support/database.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

const BACKFILL = '0026_tenant_user_count_backfill';

let app: TestApp;
let cast: Cast;

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
});
after(async () => {
  await app?.close();
});

const column = async (tenantId: number) =>
  Number(
    (
      await app.database.sql.query<{ user_count: unknown }>('SELECT user_count FROM tenants WHERE id = ?', [
        tenantId,
      ])
    )[0]!.user_count,
  );
const setColumn = (tenantId: number, n: number) =>
  app.database.sql.query('UPDATE tenants SET user_count = ? WHERE id = ?', [n, tenantId]);
const newUser = (tenantId: number) => createUser(app, cast.admin, { role: 'user', tenant_id: tenantId });
const detailCount = async (tenantId: number) => {
  const r = await api(app.url, 'GET', `/api/tenants/${tenantId}`, { auth: cast.admin });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.tenant.user_count as number;
};

test('migration 0026 sets user_count of existing tenants from their users, soft-deleted ones excluded', async () => {
  const testDb = await createTestDatabase();
  const database = await openDatabase({
    databaseUrl: testDb.databaseUrl ?? '',
    sqlitePath: testDb.sqlitePath,
  });
  try {
    const at = MIGRATIONS.findIndex((m) => m.id === BACKFILL);
    assert.ok(at > 0, `${BACKFILL} is registered`);
    await upgrade(database, MIGRATIONS[at - 1]!.id);
    const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
      database.sql.query<T>(text, params);
    const tenant = async (name: string) =>
      Number(
        (
          await q<{ id: unknown }>('INSERT INTO tenants (name, slug) VALUES (?, ?) RETURNING id', [
            name,
            name,
          ])
        )[0]!.id,
      );
    const user = async (tenantId: number | null) =>
      Number(
        (
          await q<{ id: unknown }>(
            'INSERT INTO users (username, password_hash, tenant_id) VALUES (?, ?, ?) RETURNING id',
            [uniqueName('old'), 'x', tenantId],
          )
        )[0]!.id,
      );
    const a = await tenant('old-a');
    const b = await tenant('old-b');
    const empty = await tenant('old-empty');
    for (let i = 0; i < 3; i++) await user(a);
    const gone = await user(a);
    await q('UPDATE users SET deleted_at = created_at WHERE id = ?', [gone]);
    const idle = await user(a);
    await q('UPDATE users SET is_active = ? WHERE id = ?', [false, idle]);
    await user(b);
    await user(null);
    // Written before the column was kept: every count is still the default.
    await q('UPDATE tenants SET user_count = 7 WHERE id = ?', [empty]);
    const counts = async () =>
      Object.fromEntries(
        (
          await q<{ id: unknown; user_count: unknown }>(
            'SELECT id, user_count FROM tenants WHERE id IN (?, ?, ?)',
            [a, b, empty],
          )
        ).map((r) => [Number(r.id), Number(r.user_count)]),
      );
    assert.deepEqual(await counts(), { [a]: 0, [b]: 0, [empty]: 7 });
    await upgrade(database, 'head');
    assert.deepEqual(
      await counts(),
      { [a]: 4, [b]: 1, [empty]: 0 },
      'deactivated counts, soft-deleted does not',
    );
  } finally {
    await database.close();
    await testDb.drop();
  }
});

test('the tenants API shows the column, not a live count', async () => {
  const t = await createTenant(app, cast.admin);
  await newUser(t);
  await newUser(t);
  assert.equal(await column(t), 2);
  // A figure only the column holds: every read of the API must show it.
  await setColumn(t, 41);
  assert.equal(await detailCount(t), 41);
  const list = await api(app.url, 'GET', '/api/tenants', { auth: cast.admin });
  assert.equal(list.status, 200);
  assert.equal(list.body.tenants.find((x: { id: number }) => x.id === t).user_count, 41);
  const check = await api(app.url, 'POST', `/api/tenants/${t}/check-quota`, { auth: cast.admin });
  assert.equal(check.status, 200, JSON.stringify(check.body));
  assert.equal(check.body.users.count, 41);
  // The next user write recounts: the column is exact again.
  await newUser(t);
  assert.equal(await detailCount(t), 3);
});

test('create, move and delete keep user_count; max_users is enforced and frees seats', async () => {
  const t = await createTenant(app, cast.admin);
  const other = await createTenant(app, cast.admin);
  const quota = await api(app.url, 'PUT', `/api/tenants/${t}/quota`, {
    auth: cast.admin,
    body: { max_users: 2 },
  });
  assert.equal(quota.status, 200, JSON.stringify(quota.body));
  const a = await newUser(t);
  const b = await newUser(t);
  assert.equal(await detailCount(t), 2);
  const full = await api(app.url, 'POST', '/api/admin/users', {
    auth: cast.admin,
    body: { username: uniqueName('over'), password: 'over-password-123', role: 'user', tenant_id: t },
  });
  assert.equal(full.status, 400);
  assert.equal(full.body.error, 'Tenant user limit reached (2)');
  assert.equal(await detailCount(t), 2, 'a refused creation counts nothing');

  // Moving a user away frees its seat in one tenant and takes one in the other.
  const move = await api(app.url, 'PUT', `/api/admin/users/${a.id}`, {
    auth: cast.admin,
    body: { tenant_id: other },
  });
  assert.equal(move.status, 200, JSON.stringify(move.body));
  assert.deepEqual([await detailCount(t), await detailCount(other)], [1, 1]);
  const c = await newUser(t);
  assert.equal(await detailCount(t), 2);

  // Deleting frees a seat too.
  const del = await api(app.url, 'DELETE', `/api/admin/users/${b.id}`, { auth: cast.admin });
  assert.equal(del.status, 200, JSON.stringify(del.body));
  assert.equal(await detailCount(t), 1);
  await newUser(t);
  assert.equal(await detailCount(t), 2);
  assert.equal(await column(t), 2);
  assert.ok(c.id > 0);
});

test('who may read a tenant count: its tenant admin; not another tenant admin, a plain user or nobody', async () => {
  const own = await api(app.url, 'GET', `/api/tenants/${cast.tenantA}`, {
    auth: cast.actors.tenant_admin.session!,
  });
  assert.equal(own.status, 200);
  assert.equal(own.body.tenant.user_count, await column(cast.tenantA));
  const other = await api(app.url, 'GET', `/api/tenants/${cast.tenantA}`, {
    auth: cast.actors.other_tenant_admin.session!,
  });
  assert.equal(other.status, 403);
  const user = await api(app.url, 'GET', `/api/tenants/${cast.tenantA}`, { auth: cast.actors.user.session! });
  assert.equal(user.status, 403);
  const list = await api(app.url, 'GET', '/api/tenants', { auth: cast.actors.tenant_admin.session! });
  assert.equal(list.status, 403, 'the list is for system administrators');
  const anonymous = await api(app.url, 'GET', `/api/tenants/${cast.tenantA}`, {});
  assert.equal(anonymous.status, 401);
});
