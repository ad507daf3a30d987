// /api/admin/users*: create (201, defaults, duplicates, policy), list, update, soft delete (not
// oneself), password reset, quota; tenant admins confined to their tenant; every change audited.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTenant, createUser, PASSWORD, uniqueName } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;
let A: number;
let B: number;
let tenantAdmin: Session;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  A = await createTenant(app, admin);
  B = await createTenant(app, admin);
  const ta = await createUser(app, admin, { role: 'tenant_admin', tenant_id: A });
  tenantAdmin = await login(app.url, ta.username, ta.password);
});
after(() => app?.close());

test('create: 201 {success, user_id}, role defaults to user, default tenant; duplicates and bad input 400', async () => {
  const name = uniqueName('new');
  const r = await api(app.url, 'POST', '/api/admin/users', {
    auth: admin,
    body: { username: name, email: `${name}@example.test`, password: PASSWORD },
  });
  assert.equal(r.status, 201);
  assert.deepEqual(Object.keys(r.body).sort(), ['success', 'user_id']);
  const list = await api(app.url, 'GET', '/api/admin/users', { auth: admin });
  const row = list.body.users.find((u: any) => u.id === r.body.user_id);
  for (const k of ['id', 'username', 'email', 'role', 'is_active', 'created_at']) assert.ok(k in row, k);
  assert.equal(row.role, 'user');
  assert.equal(row.tenant_id, 1);
  const dup = await api(app.url, 'POST', '/api/admin/users', {
    auth: admin,
    body: { username: name, password: PASSWORD },
  });
  assert.deepEqual([dup.status, dup.body], [400, { error: 'Username already exists' }]);
  for (const body of [
    { password: PASSWORD },
    { username: 'x y', password: PASSWORD },
    { username: uniqueName('a'), password: 'short' },
    { username: uniqueName('a'), password: PASSWORD, role: 'emperor' },
    { username: uniqueName('a'), password: PASSWORD, email: 'not-an-email' },
  ]) {
    const bad = await api(app.url, 'POST', '/api/admin/users', { auth: admin, body });
    assert.equal(bad.status, 400, JSON.stringify(body));
  }
  const log = await api(app.url, 'GET', `/api/audit/logs?action=USER_CREATE&username=${ADMIN.username}`, {
    auth: admin,
  });
  assert.ok(log.body.logs.some((l: any) => l.resource_id === String(r.body.user_id)));
  assert.ok(!JSON.stringify(log.body).includes(PASSWORD), 'no password in audit details');
});

test('a platform admin sets the tenant; a tenant admin creates only in its own tenant and never a system admin', async () => {
  const inB = await createUser(app, admin, { role: 'manager', tenant_id: B });
  const listed = await api(app.url, 'GET', '/api/admin/users', { auth: admin });
  assert.equal(listed.body.users.find((u: any) => u.id === inB.id).tenant_id, B);
  const missing = await api(app.url, 'POST', '/api/admin/users', {
    auth: admin,
    body: { username: uniqueName('x'), password: PASSWORD, tenant_id: 9999 },
  });
  assert.equal(missing.status, 400);

  const own = await api(app.url, 'POST', '/api/admin/users', {
    auth: tenantAdmin,
    body: { username: uniqueName('own'), password: PASSWORD },
  });
  assert.equal(own.status, 201);
  const cross = await api(app.url, 'POST', '/api/admin/users', {
    auth: tenantAdmin,
    body: { username: uniqueName('x'), password: PASSWORD, tenant_id: B },
  });
  assert.deepEqual([cross.status, cross.body], [403, { error: 'Cross-tenant access denied' }]);
  const elevate = await api(app.url, 'POST', '/api/admin/users', {
    auth: tenantAdmin,
    body: { username: uniqueName('x'), password: PASSWORD, role: 'platform_admin' },
  });
  assert.equal(elevate.status, 403);

  const mine = await api(app.url, 'GET', '/api/admin/users', { auth: tenantAdmin });
  assert.ok(mine.body.users.length >= 2);
  assert.ok(
    mine.body.users.every((u: any) => u.tenant_id === A),
    'a tenant admin lists only its tenant',
  );
  assert.ok(mine.body.users.some((u: any) => u.id === own.body.user_id));
});

test('update: fields, role changes within reach, deactivation ends sessions; cross-tenant 403; unknown 404', async () => {
  const u = await createUser(app, admin, { role: 'user', tenant_id: A });
  const s = await login(app.url, u.username, u.password);
  const put = (auth: Session, id: number, body: unknown) =>
    api(app.url, 'PUT', `/api/admin/users/${id}`, { auth, body });
  const ok = await put(tenantAdmin, u.id, {
    email: 'changed@example.test',
    role: 'manager',
    linux_account: 'devuser',
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.user.role, 'manager');
  assert.equal(ok.body.user.linux_account, 'devuser');
  assert.equal(
    (await api(app.url, 'GET', '/api/auth/me', { auth: s })).body.role,
    'manager',
    'role change applies to live sessions',
  );
  assert.equal((await put(tenantAdmin, u.id, { role: 'platform_admin' })).status, 403);
  assert.equal((await put(tenantAdmin, u.id, { tenant_id: B })).status, 403);
  assert.equal((await put(tenantAdmin, u.id, { bogus: 1 })).status, 400);
  assert.equal((await put(admin, u.id, { tenant_id: B })).status, 200);
  assert.equal((await put(tenantAdmin, u.id, { email: 'x@example.test' })).status, 403, 'now in tenant B');
  assert.equal((await put(admin, 999999, { email: 'x@example.test' })).status, 404);
  // No user-id enumeration across tenants: missing and foreign ids answer alike to a tenant admin.
  const foreign = await createUser(app, admin, { role: 'user', tenant_id: B });
  const missing = await put(tenantAdmin, 999999, { email: 'x@example.test' });
  const other = await put(tenantAdmin, foreign.id, { email: 'x@example.test' });
  assert.deepEqual([missing.status, missing.body], [403, { error: 'Cross-tenant access denied' }]);
  assert.deepEqual([other.status, other.body], [missing.status, missing.body]);
  assert.equal(
    (await put(tenantAdmin, admin.user.id, { email: 'x@example.test' })).status,
    403,
    'a tenant admin cannot touch a system admin',
  );
  const dup = await put(admin, u.id, { username: ADMIN.username });
  assert.deepEqual([dup.status, dup.body], [400, { error: 'Username already exists' }]);
  assert.equal((await put(admin, u.id, { is_active: false })).status, 200);
  assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 401);
  assert.equal((await put(admin, admin.user.id, { is_active: false })).status, 400, 'not oneself');
});

test('delete: soft delete, not oneself, tenant admin only inside its tenant; the user disappears from lists', async () => {
  const me = await api(app.url, 'DELETE', `/api/admin/users/${admin.user.id}`, { auth: admin });
  assert.deepEqual([me.status, me.body], [400, { error: 'You cannot delete your own account' }]);
  const inB = await createUser(app, admin, { role: 'user', tenant_id: B });
  assert.equal(
    (await api(app.url, 'DELETE', `/api/admin/users/${inB.id}`, { auth: tenantAdmin })).status,
    403,
  );
  const inA = await createUser(app, admin, { role: 'user', tenant_id: A });
  assert.equal(
    (await api(app.url, 'DELETE', `/api/admin/users/${inA.id}`, { auth: tenantAdmin })).status,
    200,
  );
  assert.equal(
    (await api(app.url, 'DELETE', `/api/admin/users/${inA.id}`, { auth: tenantAdmin })).status,
    403,
    "a deleted user is, to a tenant admin, indistinguishable from another tenant's",
  );
  const list = await api(app.url, 'GET', '/api/admin/users', { auth: admin });
  assert.ok(!list.body.users.some((u: any) => u.id === inA.id));
  const [row] = await app.database.sql.query<{ deleted_at: unknown; is_active: unknown }>(
    'SELECT deleted_at, is_active FROM users WHERE id = ?',
    [inA.id],
  );
  assert.ok(row?.deleted_at);
  const log = await api(app.url, 'GET', '/api/audit/logs?action=USER_DELETE', { auth: admin });
  assert.ok(log.body.logs.some((l: any) => l.resource_id === String(inA.id) && l.target_tenant_id === A));
});

test('password reset enforces the policy; quota accepts non-negative integers or null', async () => {
  const u = await createUser(app, admin, { role: 'user', tenant_id: A });
  assert.equal(
    (
      await api(app.url, 'PUT', `/api/admin/users/${u.id}/password`, {
        auth: tenantAdmin,
        body: { password: 'short' },
      })
    ).status,
    400,
  );
  assert.equal(
    (
      await api(app.url, 'PUT', `/api/admin/users/${u.id}/password`, {
        auth: tenantAdmin,
        body: { password: u.username },
      })
    ).status,
    400,
  );
  const ok = await api(app.url, 'PUT', `/api/admin/users/${u.id}/password`, {
    auth: tenantAdmin,
    body: { password: 'fresh-password-789', must_change_password: false },
  });
  assert.equal(ok.status, 200);
  const s = await login(app.url, u.username, 'fresh-password-789');
  assert.equal(s.user.must_change_password, false);

  const q = await api(app.url, 'PUT', `/api/admin/users/${u.id}/quota`, {
    auth: admin,
    body: {
      daily_token_quota: 2,
      monthly_token_quota: 40,
      daily_request_quota: 100,
      monthly_request_quota: null,
    },
  });
  assert.equal(q.status, 200);
  assert.deepEqual(
    [
      q.body.user.daily_token_quota,
      q.body.user.monthly_token_quota,
      q.body.user.daily_request_quota,
      q.body.user.monthly_request_quota,
    ],
    [2, 40, 100, null],
  );
  assert.equal(
    (
      await api(app.url, 'PUT', `/api/admin/users/${u.id}/quota`, {
        auth: admin,
        body: { daily_token_quota: -1 },
      })
    ).status,
    400,
  );
  assert.equal(
    (
      await api(app.url, 'PUT', `/api/admin/users/${u.id}/quota`, {
        auth: admin,
        body: { daily_token_quota: 1.5 },
      })
    ).status,
    400,
  );
  assert.equal(
    (await api(app.url, 'PUT', `/api/admin/users/${u.id}/quota`, { auth: admin, body: {} })).status,
    400,
  );
});

test('a tenant at max_users refuses new users', async () => {
  const T = await createTenant(app, admin);
  assert.equal(
    (await api(app.url, 'PUT', `/api/tenants/${T}/quota`, { auth: admin, body: { max_users: 1 } })).status,
    200,
  );
  await createUser(app, admin, { role: 'user', tenant_id: T });
  const r = await api(app.url, 'POST', '/api/admin/users', {
    auth: admin,
    body: { username: uniqueName('over'), password: PASSWORD, tenant_id: T },
  });
  assert.deepEqual([r.status, r.body], [400, { error: 'Tenant user limit reached (1)' }]);
});

test('a manager (view_users) reads the list of its own tenant, read-only; a plain user is refused', async () => {
  const m = await createUser(app, admin, { role: 'manager', tenant_id: A });
  const inA = await createUser(app, admin, { role: 'user', tenant_id: A });
  const inB = await createUser(app, admin, { role: 'user', tenant_id: B });
  const manager = await login(app.url, m.username, m.password);
  const list = await api(app.url, 'GET', '/api/admin/users', { auth: manager });
  assert.equal(list.status, 200, JSON.stringify(list.body));
  const ids = list.body.users.map((u: any) => u.id);
  assert.ok(ids.includes(inA.id) && ids.includes(m.id));
  assert.ok(!ids.includes(inB.id), 'another tenant stays out of reach');
  assert.ok(list.body.users.every((u: any) => u.tenant_id === A));
  // Reading is all: every change still needs an administrator.
  for (const [method, path, body] of [
    ['POST', '/api/admin/users', { username: uniqueName('mgr'), password: PASSWORD }],
    ['PUT', `/api/admin/users/${inA.id}`, { is_active: false }],
    ['PUT', `/api/admin/users/${inA.id}/quota`, { daily_token_quota: 1 }],
    ['DELETE', `/api/admin/users/${inA.id}`, undefined],
  ] as const) {
    const r = await api(app.url, method, path, { auth: manager, body });
    assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.body)}`);
  }
  const plain = await login(app.url, inA.username, inA.password);
  assert.equal((await api(app.url, 'GET', '/api/admin/users', { auth: plain })).status, 403);
});
