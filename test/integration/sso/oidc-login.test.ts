// OIDC login end to end over real HTTP against a real OpenID provider (test/fixtures/oidc-provider.ts):
// code flow with PKCE S256 provisions a user, the session works like a password login's, a second login
// reuses the user; and the refusals: replayed state, wrong nonce, expired state, tampered ID token
// (signature and payload), open-redirect return_to, tenant with SSO off, a state from another provider.
// Each refusal provisions nothing and writes SSO_LOGIN_REFUSED with its reason.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  driveLogin,
  followCallback,
  type OidcFixture,
  startOidcProvider,
} from '../../fixtures/oidc-provider.ts';
import { createTenant, uniqueName } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session, sessionCookieOf } from '../../support/session.ts';

let app: TestApp;
let admin: Session;
let idp: OidcFixture;
let tenantA: number;
const CLIENT_SECRET = `client-secret-${Math.random().toString(36).slice(2)}`;

/** Registers an OIDC provider at the app and its client at the fixture. */
async function registerProvider(name: string, tenantId: number | null, extra: Record<string, unknown> = {}) {
  const redirectUri = `${app.url}/api/sso/callback/${name}`;
  await idp.addClient(`client-${name}`, CLIENT_SECRET, redirectUri);
  const r = await api(app.url, 'POST', '/api/sso/providers', {
    auth: admin,
    body: {
      name,
      provider_type: 'oidc',
      issuer_url: idp.issuer,
      client_id: `client-${name}`,
      client_secret: CLIENT_SECRET,
      redirect_uri: redirectUri,
      scopes: 'openid email profile',
      tenant_id: tenantId ?? undefined,
      ...extra,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

const account = (
  overrides: Partial<{ email: string; email_verified: boolean; preferred_username: string }> = {},
) => {
  const sub = uniqueName('sub');
  idp.accounts.set(sub, {
    sub,
    email: `${sub}@corp.example`,
    email_verified: true,
    preferred_username: sub,
    name: 'Test Person',
    ...overrides,
  });
  idp.loginAs = sub;
  return sub;
};

const callback = (url: string, cookie = '') =>
  fetch(url, { redirect: 'manual', headers: { cookie }, signal: AbortSignal.timeout(20_000) });

const identityRows = (sub: string) =>
  app.database.sql.query<{ user_id: number }>(
    'SELECT user_id FROM sso_identities WHERE provider_user_id = ?',
    [sub],
  );

const refusals = async (reasonPrefix: string) => {
  const rows = (
    await app.database.sql.query<{ details: string }>(
      "SELECT details FROM audit_logs WHERE action = 'SSO_LOGIN_REFUSED'",
    )
  ).filter((r) => (JSON.parse(r.details).reason as string).startsWith(reasonPrefix));
  return rows;
};

const stateHash = (raw: string) => createHash('sha256').update(raw).digest('hex');

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  idp = await startOidcProvider();
  tenantA = await createTenant(app, admin);
  const s = await api(app.url, 'PUT', `/api/tenants/${tenantA}/settings`, {
    auth: admin,
    body: { sso_enabled: true },
  });
  assert.equal(s.status, 200, JSON.stringify(s.body));
  await registerProvider('corp-idp', tenantA);
});
// Unauthenticated refusals are audited at most 10 a minute per client address (domain/audit-policy.ts):
// each test starts in a fresh window so its refusals are all on record.
beforeEach(() => app.clock.advance(61_000));
after(async () => {
  await idp?.close();
  await app?.close();
});

describe('OIDC code flow with PKCE', () => {
  test('first login provisions a user in the provider tenant; the cookie and token work; a second login reuses it', async () => {
    const sub = account();
    const first = await driveLogin(idp, app.url, 'corp-idp', { returnTo: '/dashboard?tab=1' });
    const auth = first.authorizationUrl.searchParams;
    assert.equal(auth.get('code_challenge_method'), 'S256');
    assert.match(auth.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(auth.get('nonce'), 'a nonce is sent');
    assert.equal(auth.get('response_type'), 'code');
    // The state row stores only the hash and the verifier as ciphertext.
    const [stateRow] = await app.database.sql.query<{ code_verifier: string; state_hash: string }>(
      'SELECT code_verifier, state_hash FROM sso_login_states WHERE state_hash = ?',
      [stateHash(first.state)],
    );
    assert.ok(stateRow, 'state stored by its hash');
    assert.ok(stateRow.code_verifier.startsWith('gAAAAA'), 'verifier stored as Fernet ciphertext');

    const res = await followCallback(first);
    assert.equal(res.status, 302, await res.clone().text());
    assert.equal(res.headers.get('location'), '/dashboard?tab=1');
    const cookie = sessionCookieOf(res)!;
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    const token = decodeURIComponent(cookie.split(';')[0]!.slice('session_token='.length));

    // The verifier went to the token endpoint and matches the challenge.
    const form = idp.tokenRequests.at(-1)!;
    const verifier = form.get('code_verifier')!;
    assert.equal(createHash('sha256').update(verifier).digest('base64url'), auth.get('code_challenge'));

    const me = await api(app.url, 'GET', '/api/auth/me', { headers: { cookie: `session_token=${token}` } });
    assert.equal(me.status, 200);
    assert.equal(me.body.role, 'user');
    assert.equal(me.body.tenant_id, tenantA);
    assert.equal(me.body.email, `${sub}@corp.example`);
    assert.equal(me.body.username, sub);
    const viaBearer = await api(app.url, 'GET', '/api/auth/me', {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(viaBearer.status, 200);

    const session = await api(app.url, 'GET', '/api/sso/session', {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(session.status, 200);
    assert.equal(session.body.active, true);
    assert.equal(session.body.provider, 'corp-idp');
    assert.ok(session.body.expires_at);
    // Provider tokens: stored as ciphertext, never shown.
    const [ssoRow] = await app.database.sql.query<{ access_token: string; session_token: string }>(
      'SELECT access_token, session_token FROM sso_sessions WHERE user_id = ?',
      [me.body.id],
    );
    assert.ok(ssoRow!.access_token.startsWith('gAAAAA'));
    assert.equal(ssoRow!.session_token, createHash('sha256').update(token).digest('hex'));
    assert.ok(!JSON.stringify(session.body).includes(ssoRow!.access_token));

    const second = await driveLogin(idp, app.url, 'corp-idp');
    const res2 = await followCallback(second);
    assert.equal(res2.status, 302);
    assert.equal(res2.headers.get('location'), '/');
    const token2 = decodeURIComponent(sessionCookieOf(res2)!.split(';')[0]!.slice('session_token='.length));
    const me2 = await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token2}` } });
    assert.equal(me2.body.id, me.body.id, 'same user');
    assert.equal((await identityRows(sub)).length, 1, 'one identity row');
    const users = await app.database.sql.query('SELECT id FROM users WHERE username LIKE ?', [`${sub}%`]);
    assert.equal(users.length, 1, 'one user');

    const audits = await app.database.sql.query<{ details: string }>(
      "SELECT details FROM audit_logs WHERE action = 'SSO_LOGIN' AND user_id = ?",
      [me.body.id],
    );
    assert.deepEqual(
      audits.map((a) => JSON.parse(a.details).created),
      [true, false],
    );

    // Logout through DELETE /api/sso/session ends the session and the SSO row.
    const out = await api(app.url, 'DELETE', '/api/sso/session', {
      headers: { authorization: `Bearer ${token2}` },
    });
    assert.equal(out.status, 200);
    assert.equal(out.body.sso, true);
    const after = await api(app.url, 'GET', '/api/auth/me', {
      headers: { authorization: `Bearer ${token2}` },
    });
    assert.equal(after.status, 401);
    const left = await app.database.sql.query('SELECT id FROM sso_sessions WHERE session_token = ?', [
      createHash('sha256').update(token2).digest('hex'),
    ]);
    assert.equal(left.length, 0);
    // The first session is untouched.
    assert.equal(
      (await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } })).status,
      200,
    );
  });

  test('a replayed state (same callback twice) is refused', async () => {
    account();
    const d = await driveLogin(idp, app.url, 'corp-idp');
    assert.equal((await followCallback(d)).status, 302);
    const again = await followCallback(d);
    assert.equal(again.status, 400);
    assert.deepEqual(await again.json(), { error: 'Invalid or expired sign-in request; please start again' });
    assert.equal(sessionCookieOf(again), undefined);
    assert.ok((await refusals('state_replayed')).length >= 1);
  });

  test('a callback from a browser that did not start the login (no or another binding cookie) is refused', async () => {
    const sub = account();
    const d = await driveLogin(idp, app.url, 'corp-idp');
    assert.match(d.bindingCookie, /^sso_login_state=/);
    const start = await fetch(`${app.url}/api/sso/login/corp-idp`, { redirect: 'manual' });
    const cookie = start.headers.getSetCookie().find((c) => c.startsWith('sso_login_state='))!;
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.match(cookie, /Path=\/api\/sso\/callback\/corp-idp/i);
    for (const other of ['', cookie.split(';')[0]!]) {
      const res = await callback(d.callbackUrl, other);
      assert.equal(res.status, 400);
      assert.equal(sessionCookieOf(res), undefined);
    }
    assert.equal((await identityRows(sub)).length, 0);
    assert.ok((await refusals('browser_binding_mismatch')).length >= 2);
    // The state was not consumed by the refused attempts: the right browser still signs in.
    const ok = await followCallback(d);
    assert.equal(ok.status, 302);
    assert.ok(
      ok.headers.getSetCookie().some((c) => c.startsWith('sso_login_state=;')),
      'binding cookie cleared',
    );
  });

  test('a callback without or with an unknown state is refused', async () => {
    const none = await callback(`${app.url}/api/sso/callback/corp-idp?code=abc`);
    assert.equal(none.status, 400);
    const unknown = await callback(
      `${app.url}/api/sso/callback/corp-idp?code=abc&state=not-a-state`,
      'sso_login_state=not-a-state',
    );
    assert.equal(unknown.status, 400);
    assert.ok((await refusals('unknown_state')).length >= 2);
  });

  test('a wrong nonce (the stored nonce differs from the ID token) is refused; nothing provisioned', async () => {
    const sub = account();
    const d = await driveLogin(idp, app.url, 'corp-idp');
    await app.database.sql.query(
      "UPDATE sso_login_states SET nonce = 'some-other-nonce' WHERE state_hash = ?",
      [stateHash(d.state)],
    );
    const res = await followCallback(d);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'Single sign-on login failed' });
    assert.equal(sessionCookieOf(res), undefined);
    assert.equal((await identityRows(sub)).length, 0);
    assert.ok((await refusals('token_exchange_failed')).length >= 1);
  });

  test('an expired state (older than 10 minutes) is refused', async () => {
    const sub = account();
    const d = await driveLogin(idp, app.url, 'corp-idp');
    // Only forward: the audit flood window (and everything else) sees time move one way.
    app.clock.advance(10 * 60_000 + 1000);
    const res = await followCallback(d);
    assert.equal(res.status, 400);
    assert.equal(sessionCookieOf(res), undefined);
    assert.equal((await identityRows(sub)).length, 0);
    assert.ok((await refusals('state_expired')).length >= 1);
  });

  for (const mode of ['signature', 'payload'] as const) {
    test(`a tampered ID token (${mode}) is refused; nothing provisioned`, async () => {
      const sub = account();
      const d = await driveLogin(idp, app.url, 'corp-idp');
      idp.tamperIdToken = mode;
      let res: Response;
      try {
        res = await followCallback(d);
      } finally {
        idp.tamperIdToken = undefined;
      }
      assert.equal(res.status, 401, await res.clone().text());
      assert.equal(sessionCookieOf(res), undefined);
      assert.equal((await identityRows(sub)).length, 0);
      const users = await app.database.sql.query('SELECT id FROM users WHERE username LIKE ?', [`${sub}%`]);
      assert.equal(users.length, 0);
    });
  }

  test('open-redirect return_to values are refused before the provider is contacted; a safe one is kept', async () => {
    for (const bad of [
      '//evil.example/x',
      'https://evil.example/',
      '/\\evil.example',
      '\\\\evil.example',
      'javascript:alert(1)',
      'dashboard',
      '/ok\r\nLocation: https://evil.example',
      `/${'a'.repeat(600)}`,
    ]) {
      const res = await fetch(`${app.url}/api/sso/login/corp-idp?return_to=${encodeURIComponent(bad)}`, {
        redirect: 'manual',
      });
      assert.equal(res.status, 400, bad);
      assert.deepEqual(await res.json(), { error: 'return_to must be a relative path on this site' });
    }
    const arr = await fetch(`${app.url}/api/sso/login/corp-idp?return_to=/a&return_to=/b`, {
      redirect: 'manual',
    });
    assert.equal(arr.status, 400, 'an array return_to is refused');
    assert.ok((await refusals('unsafe_return_to')).length >= 9);
  });

  test('a state issued for another provider is refused at this provider', async () => {
    await registerProvider('corp-idp-two', tenantA);
    account();
    const d = await driveLogin(idp, app.url, 'corp-idp');
    const moved = d.callbackUrl.replace('/api/sso/callback/corp-idp?', '/api/sso/callback/corp-idp-two?');
    const res = await followCallback(d, moved);
    assert.equal(res.status, 400);
    assert.ok((await refusals('state_other_provider')).length >= 1);
  });

  test('an error answer from the provider is refused and audited', async () => {
    const res = await callback(`${app.url}/api/sso/callback/corp-idp?error=access_denied&state=x`);
    assert.equal(res.status, 401);
    assert.ok((await refusals('provider_error')).length >= 1);
  });
});

describe('tenant sso_enabled', () => {
  test('a tenant with SSO off refuses login start and callback with a clear 403', async () => {
    const tenantB = await createTenant(app, admin);
    await api(app.url, 'PUT', `/api/tenants/${tenantB}/settings`, {
      auth: admin,
      body: { sso_enabled: true },
    });
    await registerProvider('b-idp', tenantB);
    const sub = account();
    const d = await driveLogin(idp, app.url, 'b-idp');
    const off = await api(app.url, 'PUT', `/api/tenants/${tenantB}/settings`, {
      auth: admin,
      body: { sso_enabled: false },
    });
    assert.equal(off.status, 200);
    const res = await followCallback(d);
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { error: 'Single sign-on is disabled for this tenant' });
    const start = await fetch(`${app.url}/api/sso/login/b-idp`, { redirect: 'manual' });
    assert.equal(start.status, 403);
    assert.deepEqual(await start.json(), { error: 'Single sign-on is disabled for this tenant' });
    assert.equal((await identityRows(sub)).length, 0);
    assert.ok((await refusals('sso_disabled_for_tenant')).length >= 2);
  });

  test('a suspended tenant refuses the sign-in like password login does', async () => {
    const tenantC = await createTenant(app, admin);
    await api(app.url, 'PUT', `/api/tenants/${tenantC}/settings`, {
      auth: admin,
      body: { sso_enabled: true },
    });
    await registerProvider('c-idp', tenantC);
    account();
    const first = await driveLogin(idp, app.url, 'c-idp');
    assert.equal((await followCallback(first)).status, 302);
    const susp = await api(app.url, 'POST', `/api/tenants/${tenantC}/suspend`, { auth: admin });
    assert.equal(susp.status, 200, JSON.stringify(susp.body));
    const d = await driveLogin(idp, app.url, 'c-idp');
    const res = await followCallback(d);
    assert.equal(res.status, 403);
    assert.match((await res.json()).error, /suspended/);
    assert.equal(sessionCookieOf(res), undefined);
  });
});

describe('user state', () => {
  test('a disabled user is refused like password login (401); nothing else is created', async () => {
    account();
    const first = await driveLogin(idp, app.url, 'corp-idp');
    const ok = await followCallback(first);
    assert.equal(ok.status, 302);
    const token = decodeURIComponent(sessionCookieOf(ok)!.split(';')[0]!.slice('session_token='.length));
    const me = await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } });
    const off = await api(app.url, 'PUT', `/api/admin/users/${me.body.id}`, {
      auth: admin,
      body: { is_active: false },
    });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    const again = await driveLogin(idp, app.url, 'corp-idp');
    const res = await followCallback(again);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'Account is disabled' });
    assert.equal(sessionCookieOf(res), undefined);
    assert.ok((await refusals('account_disabled')).length >= 1);
  });

  test('provisioning respects the tenant max_users', async () => {
    const tenantD = await createTenant(app, admin);
    await api(app.url, 'PUT', `/api/tenants/${tenantD}/settings`, {
      auth: admin,
      body: { sso_enabled: true },
    });
    const q = await api(app.url, 'PUT', `/api/tenants/${tenantD}/quota`, {
      auth: admin,
      body: { max_users: 1 },
    });
    assert.equal(q.status, 200, JSON.stringify(q.body));
    await registerProvider('d-idp', tenantD);
    account();
    assert.equal(
      (await followCallback(await driveLogin(idp, app.url, 'd-idp'))).status,
      302,
      'the first user fits',
    );
    const sub = account();
    const res = await followCallback(await driveLogin(idp, app.url, 'd-idp'));
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { error: 'Tenant user limit reached (1)' });
    assert.equal((await identityRows(sub)).length, 0);
    assert.ok((await refusals('tenant_user_limit')).length >= 1);
  });
});

describe('secrets never leak', () => {
  test('the client secret, the provider tokens and the code verifier are absent from logs', async () => {
    const all = app.logs.join('\n');
    assert.ok(!all.includes(CLIENT_SECRET), 'client secret not logged');
    const rows = await app.database.sql.query<{ access_token: string | null }>(
      'SELECT access_token FROM sso_sessions',
    );
    assert.ok(rows.length > 0);
    for (const r of rows) if (r.access_token) assert.ok(!all.includes(r.access_token));
    for (const f of idp.tokenRequests) {
      assert.ok(!all.includes(f.get('code_verifier')!), 'verifier not logged');
      assert.ok(!all.includes(f.get('code')!), 'code not logged');
    }
    const audit = await app.database.sql.query<{ details: string | null }>(
      "SELECT details FROM audit_logs WHERE action LIKE 'SSO_%'",
    );
    const text = JSON.stringify(audit);
    assert.ok(!text.includes(CLIENT_SECRET));
    for (const f of idp.tokenRequests) assert.ok(!text.includes(f.get('code')!));
  });
});
