// Session authentication over real HTTP: login answers, cookie flags (Secure behind a trusted proxy
// only), token priority, logout, expiry on the injected clock, disabled/deleted users, suspended
// tenants, profile and password change.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTenant, createUser, PASSWORD } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session, sessionCookieOf } from '../support/session.ts';

let app: TestApp;
let admin: Session;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
});
after(() => app?.close());

const cookieHeader = (token: string) => ({ cookie: `session_token=${token}` });
const loginRaw = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${app.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('login', () => {
  test('200 with the profile and role; 400 without username or password; 401 for bad credentials', async () => {
    const ok = await api(app.url, 'POST', '/api/auth/login', { body: ADMIN });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.success, true);
    assert.deepEqual(Object.keys(ok.body.user).slice(0, 4), ['id', 'username', 'email', 'role']);
    assert.equal(ok.body.user.role, 'platform_admin');
    assert.ok(
      !JSON.stringify(ok.body).includes(ok.res.headers.getSetCookie()[0]!.split(';')[0]!.split('=')[1]!),
      'token only in the cookie',
    );
    for (const body of [
      {},
      { username: 'admin' },
      { password: 'x' },
      { username: '', password: 'x' },
      { username: 'admin', password: '' },
      { username: 1, password: 2 },
    ]) {
      const r = await api(app.url, 'POST', '/api/auth/login', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(typeof r.body.error, 'string');
    }
    const bad = await api(app.url, 'POST', '/api/auth/login', {
      body: { username: 'admin', password: 'wrong-password' },
    });
    assert.deepEqual([bad.status, bad.body], [401, { error: 'Invalid username or password' }]);
    const unknown = await api(app.url, 'POST', '/api/auth/login', {
      body: { username: 'nobody-here', password: 'wrong-password' },
    });
    assert.deepEqual([unknown.status, unknown.body], [401, { error: 'Invalid username or password' }]);
  });

  test('the session record stores only the SHA-256 of the token', async () => {
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    const rows = await app.database.sql.query<{ token: string }>('SELECT token FROM sessions');
    assert.ok(!rows.some((r) => r.token === s.token));
    const { createHash } = await import('node:crypto');
    assert.ok(rows.some((r) => r.token === createHash('sha256').update(s.token).digest('hex')));
  });
});

describe('cookie flags', () => {
  test('HttpOnly, SameSite=Lax, Path=/, Max-Age of the session lifetime, not Secure over plain HTTP', async () => {
    const res = await loginRaw(ADMIN);
    const c = sessionCookieOf(res)!;
    assert.match(c, /; HttpOnly/i);
    assert.match(c, /; SameSite=Lax/i);
    assert.match(c, /; Path=\//i);
    assert.match(c, /; Max-Age=86400/i);
    assert.doesNotMatch(c, /; Secure/i);
  });

  test('Secure when a trusted proxy forwards https', async () => {
    // The test client is on loopback, which SVC_TRUST_PROXY trusts by default.
    const c = sessionCookieOf(await loginRaw(ADMIN, { 'x-forwarded-proto': 'https' }))!;
    assert.match(c, /; Secure/i);
  });

  test('X-Forwarded-Proto from an untrusted peer is ignored', async () => {
    const other = await startTestApp({ env: { SVC_TRUST_PROXY: 'false' } });
    try {
      const res = await fetch(`${other.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
        body: JSON.stringify(ADMIN),
      });
      assert.equal(res.status, 200);
      assert.doesNotMatch(sessionCookieOf(res)!, /; Secure/i);
    } finally {
      await other.close();
    }
  });

  test('the lifetime setting is honoured', async () => {
    const other = await startTestApp({ env: { SVC_SESSION_LIFETIME_HOURS: '2' } });
    try {
      const s = await login(other.url, ADMIN.username, ADMIN.password);
      assert.match(s.setCookie, /Max-Age=7200/);
      other.clock.advance(2 * 3600_000 - 5_000);
      assert.equal((await api(other.url, 'GET', '/api/auth/me', { auth: s })).status, 200);
      other.clock.advance(10_000);
      assert.equal((await api(other.url, 'GET', '/api/auth/me', { auth: s })).status, 401);
    } finally {
      await other.close();
    }
  });
});

describe('token priority: cookie, then Bearer, then ?token=', () => {
  test('each source works alone', async () => {
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { headers: cookieHeader(s.token) })).status, 200);
    assert.equal(
      (await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${s.token}` } })).status,
      200,
    );
    assert.equal(
      (await api(app.url, 'GET', `/api/auth/me?token=${encodeURIComponent(s.token)}`)).status,
      200,
    );
  });

  test('the cookie wins over the header, the header over the query', async () => {
    const adminS = await login(app.url, ADMIN.username, ADMIN.password);
    const u = await createUser(app, admin, { role: 'user' });
    const userS = await login(app.url, u.username, u.password);
    const me = async (opts: { cookie?: string; bearer?: string; query?: string }) => {
      const headers: Record<string, string> = {};
      if (opts.cookie) headers.cookie = `other=1; session_token=${opts.cookie}`;
      if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
      const r = await api(app.url, 'GET', `/api/auth/me${opts.query ? `?token=${opts.query}` : ''}`, {
        headers,
      });
      return r.status === 200 ? r.body.username : r.status;
    };
    assert.equal(await me({ cookie: userS.token, bearer: adminS.token, query: adminS.token }), u.username);
    assert.equal(await me({ bearer: userS.token, query: adminS.token }), u.username);
    assert.equal(await me({ query: userS.token }), u.username);
    // The first source present is the one used: an invalid cookie is not rescued by a valid header.
    assert.equal(await me({ cookie: 'not-a-valid-session-token', bearer: adminS.token }), 401);
    assert.equal(await me({ bearer: 'not-a-valid-session-token', query: adminS.token }), 401);
  });

  test('no token: 401 with an error body', async () => {
    const r = await api(app.url, 'GET', '/api/auth/me');
    assert.deepEqual([r.status, typeof r.body.error], [401, 'string']);
  });
});

describe('check, profile, me', () => {
  test('check is public and tells whether the session is valid', async () => {
    const anon = await api(app.url, 'GET', '/api/auth/check');
    assert.deepEqual([anon.status, anon.body], [200, { authenticated: false, user: {} }]);
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    const c = await api(app.url, 'GET', '/api/auth/check', { auth: s });
    assert.equal(c.body.authenticated, true);
    assert.equal(c.body.user.username, ADMIN.username);
    for (const k of ['id', 'username', 'email', 'role']) assert.ok(k in c.body.user, `user.${k}`);
  });

  test("check carries the caller's effective permissions (the web app offers pages from them)", async () => {
    const m = await createUser(app, admin, { role: 'manager' });
    const c = await api(app.url, 'GET', '/api/auth/check', {
      auth: await login(app.url, m.username, m.password),
    });
    const me = await api(app.url, 'GET', '/api/auth/me', {
      auth: await login(app.url, m.username, m.password),
    });
    assert.ok(c.body.user.permissions.includes('view_users'), JSON.stringify(c.body.user));
    assert.ok(!c.body.user.permissions.includes('edit_user'));
    assert.deepEqual(c.body.user.permissions, me.body.permissions);
  });

  test('profile has the spec fields', async () => {
    const r = await api(app.url, 'GET', '/api/auth/profile', { auth: admin });
    assert.deepEqual(Object.keys(r.body).sort(), [
      'created_at',
      'email',
      'id',
      'is_active',
      'role',
      'username',
    ]);
    assert.equal(r.body.is_active, true);
    assert.ok(!Number.isNaN(Date.parse(r.body.created_at)));
  });

  test('me lists the merged permissions (role template + user extras)', async () => {
    const u = await createUser(app, admin, { role: 'readonly' });
    const s = await login(app.url, u.username, u.password);
    assert.deepEqual((await api(app.url, 'GET', '/api/auth/me', { auth: s })).body.permissions, [
      'view_dashboard',
    ]);
    const { permissionsRepository } = await import('../../db/repositories/permissions.ts');
    await permissionsRepository(app.database).grant(u.id, 'view_audit_logs', 1, new Date());
    assert.deepEqual((await api(app.url, 'GET', '/api/auth/me', { auth: s })).body.permissions, [
      'view_audit_logs',
      'view_dashboard',
    ]);
    // The extra grant opens exactly what it names.
    assert.equal((await api(app.url, 'GET', '/api/audit/logs', { auth: s })).status, 200);
    assert.equal((await api(app.url, 'GET', '/api/audit/logs/export', { auth: s })).status, 403);
  });
});

describe('ending sessions', () => {
  test('logout ends the session server-side, whatever carried the token', async () => {
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    const out = await api(app.url, 'POST', '/api/auth/logout', { headers: cookieHeader(s.token) });
    assert.deepEqual([out.status, out.body], [200, { success: true }]);
    assert.match(sessionCookieOf(out.res)!, /session_token=;/);
    for (const headers of [cookieHeader(s.token), s.headers])
      assert.equal((await api(app.url, 'GET', '/api/auth/me', { headers })).status, 401);
    assert.equal((await api(app.url, 'GET', `/api/auth/me?token=${s.token}`)).status, 401);
    assert.equal((await api(app.url, 'GET', '/api/auth/check', { auth: s })).body.authenticated, false);
    // Other sessions of the same user live on.
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: admin })).status, 200);
  });

  test('an expired session is refused (clock moved past the 24 h default)', async () => {
    const s = await login(app.url, ADMIN.username, ADMIN.password);
    app.clock.advance(24 * 3600_000 + 1000);
    try {
      assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 401);
    } finally {
      app.clock.advance(-(24 * 3600_000 + 1000));
    }
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  });

  test('a soft-deleted user is refused: existing session 401, login 401', async () => {
    const u = await createUser(app, admin, { role: 'user' });
    const s = await login(app.url, u.username, u.password);
    assert.equal((await api(app.url, 'DELETE', `/api/admin/users/${u.id}`, { auth: admin })).status, 200);
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 401);
    const again = await api(app.url, 'POST', '/api/auth/login', {
      body: { username: u.username, password: u.password },
    });
    assert.equal(again.status, 401);
    const row = (
      await app.database.sql.query<{ deleted_at: unknown }>('SELECT deleted_at FROM users WHERE id = ?', [
        u.id,
      ])
    )[0];
    assert.ok(row?.deleted_at, 'soft delete keeps the row with deleted_at');
  });

  test('an inactive user is refused even with a live session row', async () => {
    const u = await createUser(app, admin, { role: 'user' });
    const s = await login(app.url, u.username, u.password);
    // Deactivate directly in the database: the check must not depend on the admin route ending sessions.
    await app.database.sql.query('UPDATE users SET is_active = ? WHERE id = ?', [false, u.id]);
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 401);
    const again = await api(app.url, 'POST', '/api/auth/login', {
      body: { username: u.username, password: u.password },
    });
    assert.equal(again.status, 401);
  });

  test('a suspended tenant: login 403 with a clear message, sessions refused; activation restores access', async () => {
    const tenant = await createTenant(app, admin);
    const u = await createUser(app, admin, { role: 'tenant_admin', tenant_id: tenant });
    const s = await login(app.url, u.username, u.password);
    assert.equal((await api(app.url, 'POST', `/api/tenants/${tenant}/suspend`, { auth: admin })).status, 200);
    const refused = await api(app.url, 'POST', '/api/auth/login', {
      body: { username: u.username, password: u.password },
    });
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /suspended/);
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 403);
    assert.equal(
      (await api(app.url, 'POST', `/api/tenants/${tenant}/activate`, { auth: admin })).status,
      200,
    );
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s })).status, 200);
    await login(app.url, u.username, u.password);
  });
});

describe('change password', () => {
  test('checks the current password and the policy, then ends the other sessions', async () => {
    const u = await createUser(app, admin, { role: 'user' });
    const s1 = await login(app.url, u.username, u.password);
    const s2 = await login(app.url, u.username, u.password);
    const change = (body: unknown) => api(app.url, 'POST', '/api/auth/change-password', { auth: s1, body });
    assert.equal(
      (await change({ current_password: 'wrong-password-1', new_password: 'brand-new-password-1' })).status,
      400,
    );
    assert.match(
      (await change({ current_password: PASSWORD, new_password: 'short' })).body.error,
      /at least 12/,
    );
    assert.match(
      (await change({ current_password: PASSWORD, new_password: u.username })).body.error,
      /username|at least/,
    );
    const ok = await change({ current_password: PASSWORD, new_password: 'brand-new-password-1' });
    assert.deepEqual([ok.status, ok.body.success, typeof ok.body.message], [200, true, 'string']);
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s1 })).status, 200);
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: s2 })).status, 401);
    await login(app.url, u.username, 'brand-new-password-1');
    assert.equal(
      (await api(app.url, 'POST', '/api/auth/login', { body: { username: u.username, password: PASSWORD } }))
        .status,
      401,
    );
  });

  test('the policy refuses a password equal to the username even when long enough', async () => {
    const name = 'long-enough-username';
    const r = await api(app.url, 'POST', '/api/admin/users', {
      auth: admin,
      body: { username: name, password: name },
    });
    assert.deepEqual([r.status, r.body], [400, { error: 'Password must not be the same as the username' }]);
    const policy = await api(app.url, 'GET', '/api/password-policy', { auth: admin });
    assert.deepEqual(policy.body, { min_length: 12, max_length: 128, must_differ_from_username: true });
  });
});
