// must_change_password: every protected endpoint answers 403 except the six the spec lists; changing
// the password lifts it. The user is a platform admin, so a 403 can only come from this rule.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createUser } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
});
after(() => app?.close());

// Protected endpoints outside the allowlist (one per router of this issue).
const REFUSED: [string, string][] = [
  ['GET', '/api/admin/users'],
  ['POST', '/api/admin/users'],
  ['GET', '/api/tenants'],
  ['GET', '/api/tenants/plans'],
  ['GET', '/api/tenants/1'],
  ['GET', '/api/api-keys?tenant_id=1'],
  ['GET', '/api/audit/logs'],
  ['GET', '/api/audit-logs'],
  ['GET', '/api/governance/audit-logs'],
  ['GET', '/api/audit/logs/export'],
  ['GET', '/api/security-settings'],
  ['PUT', '/api/security-settings'],
  ['GET', '/api/auth/me/extra'],
];

test('only the six allowlisted endpoints answer while a password change is pending', async () => {
  const u = await createUser(app, admin, { role: 'platform_admin', must_change_password: true });
  const s = await login(app.url, u.username, u.password);
  assert.equal(s.user.must_change_password, true);

  for (const [method, path] of REFUSED) {
    const r = await api(app.url, method, path, { auth: s, body: method === 'GET' ? undefined : {} });
    if (path === '/api/auth/me/extra') {
      assert.equal(r.status, 404, 'an unknown path is still unknown');
      continue;
    }
    assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.error, /password change required/i);
  }

  assert.equal(
    (await api(app.url, 'GET', '/api/auth/check', { auth: s })).body.user.must_change_password,
    true,
  );
  assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 200);
  assert.equal((await api(app.url, 'GET', '/api/auth/profile', { auth: s })).status, 200);
  assert.equal((await api(app.url, 'GET', '/api/password-policy', { auth: s })).status, 200);
  // Trailing slash and HEAD reach the same handlers and stay allowed.
  assert.equal((await api(app.url, 'GET', '/api/auth/me/', { auth: s })).status, 200);
  assert.equal((await api(app.url, 'HEAD', '/api/auth/profile', { auth: s })).status, 200);

  const changed = await api(app.url, 'POST', '/api/auth/change-password', {
    auth: s,
    body: { current_password: u.password, new_password: 'a-new-password-456' },
  });
  assert.equal(changed.status, 200);
  assert.equal((await api(app.url, 'GET', '/api/admin/users', { auth: s })).status, 200);
  assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).body.must_change_password, false);
});

test('logout stays allowed while a change is pending', async () => {
  const u = await createUser(app, admin, { role: 'user', must_change_password: true });
  const s = await login(app.url, u.username, u.password);
  assert.equal((await api(app.url, 'POST', '/api/auth/logout', { auth: s })).status, 200);
  assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 401);
});

test('an admin password reset makes the user change it at next login (unless told otherwise)', async () => {
  const u = await createUser(app, admin, { role: 'user' });
  const reset = await api(app.url, 'PUT', `/api/admin/users/${u.id}/password`, {
    auth: admin,
    body: { password: 'reset-by-admin-123' },
  });
  assert.equal(reset.status, 200);
  const s = await login(app.url, u.username, 'reset-by-admin-123');
  assert.equal(s.user.must_change_password, true);
  assert.equal((await api(app.url, 'GET', '/api/audit/logs', { auth: s })).status, 403);
});

test('the first administrator created with a generated password must change it', async () => {
  const { bootstrapAdmin } = await import('../../bin/bootstrap-admin.ts');
  const { createTestDatabase } = await import('../support/database.ts');
  const { openDatabase } = await import('../../db/client.ts');
  const { upgrade } = await import('../../migrations/runner.ts');
  const testDb = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  try {
    await upgrade(db, 'head');
    let printed = '';
    await bootstrapAdmin(db, { username: 'first' }, (l) => (printed = l));
    const password = /generated password: (\S+)/.exec(printed)![1]!;
    await db.close();
    const other = await startTestApp({ testDb });
    try {
      const s = await login(other.url, 'first', password);
      assert.equal(s.user.must_change_password, true);
      assert.equal((await api(other.url, 'GET', '/api/admin/users', { auth: s })).status, 403);
    } finally {
      await other.close();
    }
  } finally {
    await testDb.drop();
  }
});
