// tenants.user_count (issue 10 item 1): the tenant's users that are not soft-deleted, deactivated ones
// included, kept by the users repository on every write that changes it (create, tenant move, soft
// delete) with a recount in the same transaction. Checked through the admin users API and
// GET /api/tenants/:id, and in the column itself (the tenant detail and list read that column; see
// tenant-user-count-column.test.ts). Concurrent creations in one tenant end exact (on
// PostgreSQL they race for real), and a recount repairs a drifted column.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { usersRepository } from '../../db/repositories/users.ts';
import { hashPassword } from '../../domain/passwords.ts';
import { buildCast, type Cast, createTenant, createUser, uniqueName } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

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

/** The tenant's user_count as the API shows it, checked against the column. */
async function userCount(tenantId: number): Promise<number> {
  const r = await api(app.url, 'GET', `/api/tenants/${tenantId}`, { auth: cast.admin });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.tenant.user_count, await column(tenantId), 'API and column agree');
  return r.body.tenant.user_count;
}

const newUser = (tenantId: number) => createUser(app, cast.admin, { role: 'user', tenant_id: tenantId });
const putUser = (id: number, body: Record<string, unknown>) =>
  api(app.url, 'PUT', `/api/admin/users/${id}`, { auth: cast.admin, body });

test('creating users counts them in their tenant', async () => {
  const t = await createTenant(app, cast.admin);
  assert.equal(await userCount(t), 0);
  await newUser(t);
  await newUser(t);
  assert.equal(await userCount(t), 2);
});

test('moving a user changes both tenants; moving out of every tenant too', async () => {
  const from = await createTenant(app, cast.admin);
  const to = await createTenant(app, cast.admin);
  const u = await newUser(from);
  await newUser(from);
  assert.deepEqual([await userCount(from), await userCount(to)], [2, 0]);
  assert.equal((await putUser(u.id, { tenant_id: to })).status, 200);
  assert.deepEqual([await userCount(from), await userCount(to)], [1, 1]);
  assert.equal((await putUser(u.id, { tenant_id: null })).status, 200);
  assert.deepEqual([await userCount(from), await userCount(to)], [1, 0]);
});

test('deactivated users keep their seat; soft-deleted users leave the count', async () => {
  const t = await createTenant(app, cast.admin);
  const a = await newUser(t);
  const b = await newUser(t);
  assert.equal((await putUser(a.id, { is_active: false })).status, 200);
  assert.equal(await userCount(t), 2, 'a deactivated user still counts');
  const del = await api(app.url, 'DELETE', `/api/admin/users/${b.id}`, { auth: cast.admin });
  assert.equal(del.status, 200, JSON.stringify(del.body));
  assert.equal(await userCount(t), 1);
  const delA = await api(app.url, 'DELETE', `/api/admin/users/${a.id}`, { auth: cast.admin });
  assert.equal(delA.status, 200);
  assert.equal(await userCount(t), 0);
});

test('concurrent creations in one tenant end exact', async () => {
  const t = await createTenant(app, cast.admin);
  await Promise.all(Array.from({ length: 8 }, () => newUser(t)));
  assert.equal(await userCount(t), 8);
});

test('a user written by the repository directly is counted, and a recount repairs drift', async () => {
  const t = await createTenant(app, cast.admin);
  await newUser(t);
  await app.database.sql.query('UPDATE tenants SET user_count = ? WHERE id = ?', [999, t]);
  await usersRepository(app.database).create({
    username: uniqueName('direct'),
    passwordHash: await hashPassword('direct-password-123'),
    role: 'user',
    tenantId: t,
  });
  assert.equal(await column(t), 2);
  assert.equal(await userCount(t), 2);
});

test('tenant scope: a tenant admin reads its own count, not another tenant', async () => {
  const admin = cast.actors.tenant_admin.session!;
  const own = await api(app.url, 'GET', `/api/tenants/${cast.tenantA}`, { auth: admin });
  assert.equal(own.status, 200);
  assert.equal(own.body.tenant.user_count, await column(cast.tenantA));
  assert.ok(own.body.tenant.user_count >= 4, 'the cast users of tenant A');
  const other = await api(app.url, 'GET', `/api/tenants/${cast.tenantB}`, { auth: admin });
  assert.equal(other.status, 403);
  assert.equal(other.body.user_count, undefined);
});
