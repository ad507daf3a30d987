// /api/sso/providers over real HTTP: registration validation (400 naming the field), duplicates (409,
// names never reused), who may register (system administrators only: provider URLs are fetched by the
// server) and disable (system admin any; tenant admin only its own tenant's; nobody else), what the list shows to whom, and that a client secret is stored only as
// ciphertext and never appears (plaintext or ciphertext) in a response or a log line.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildCast, type Cast, uniqueName } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api, type Session } from '../../support/session.ts';

let app: TestApp;
let cast: Cast;
const SECRET = `s3cret-${Math.random().toString(36).slice(2)}-value`;

const oidcBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider_type: 'oidc',
  issuer_url: 'http://127.0.0.1:1/issuer',
  client_id: 'client-1',
  client_secret: SECRET,
  redirect_uri: `${app.url}/api/sso/callback/${name}`,
  ...extra,
});

const oauth2Body = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider_type: 'oauth2',
  client_id: 'client-2',
  client_secret: SECRET,
  authorization_url: 'https://idp.example/authorize',
  token_url: 'https://idp.example/token',
  userinfo_url: 'https://idp.example/userinfo',
  redirect_uri: `${app.url}/api/sso/callback/${name}`,
  scopes: ['read:user', 'user:email'],
  ...extra,
});

const session = (name: keyof Cast['actors']): Session => cast.actors[name].session!;
const register = (auth: Session | undefined, body: unknown) =>
  api(app.url, 'POST', '/api/sso/providers', { auth, body });

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  for (const t of [cast.tenantA, cast.tenantB])
    await api(app.url, 'PUT', `/api/tenants/${t}/settings`, {
      auth: cast.admin,
      body: { sso_enabled: true },
    });
});
after(() => app?.close());

describe('registration validation', () => {
  test('400 naming the field for each missing or malformed part', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...oidcBody('v1'), provider_type: undefined }, 'provider_type'],
      [{ ...oidcBody('v1'), provider_type: 'ldap' }, 'provider_type'],
      [{ ...oidcBody('v1'), name: undefined }, 'name'],
      [{ ...oidcBody('v1'), name: 'has space' }, 'name'],
      [{ ...oidcBody('v1'), name: '../x' }, 'name'],
      [{ ...oidcBody('v1'), name: 'x'.repeat(101) }, 'name'],
      [{ ...oidcBody('v1'), issuer_url: undefined }, 'issuer_url'],
      [{ ...oidcBody('v1'), issuer_url: 'ftp://idp.example' }, 'issuer_url'],
      [{ ...oidcBody('v1'), issuer_url: 'https://user:pw@idp.example' }, 'issuer_url'],
      [{ ...oidcBody('v1'), client_id: '' }, 'client_id'],
      [{ ...oidcBody('v1'), client_secret: undefined }, 'client_secret'],
      [{ ...oidcBody('v1'), redirect_uri: 'javascript:alert(1)' }, 'redirect_uri'],
      [{ ...oidcBody('v1'), tenant_id: 'abc' }, 'tenant_id'],
      [{ ...oidcBody('v1'), tenant_id: 999999 }, 'tenant_id'],
      [{ ...oidcBody('v1'), attribute_mapping: { unknown_field: 'x' } }, 'attribute_mapping'],
      [{ ...oauth2Body('v2'), token_url: undefined }, 'token_url'],
      [{ ...oauth2Body('v2'), userinfo_url: 'not a url' }, 'userinfo_url'],
      [{ ...oauth2Body('v2'), authorization_url: undefined }, 'authorization_url'],
      [{ ...oauth2Body('v2'), scopes: undefined }, 'scopes'],
    ];
    for (const [body, field] of cases) {
      const r = await register(cast.admin, body);
      assert.equal(r.status, 400, `${field}: ${JSON.stringify(r.body)}`);
      assert.ok(r.body.error.startsWith(field), `${field} named in ${r.body.error}`);
      assert.ok(!JSON.stringify(r.body).includes(SECRET));
    }
    const none = await app.database.sql.query("SELECT id FROM sso_providers WHERE name IN ('v1', 'v2')");
    assert.equal(none.length, 0);
  });

  test('loopback and private provider URLs are accepted (no egress policy for admin-registered IdPs)', async () => {
    const r = await register(
      cast.admin,
      oidcBody(uniqueName('loop'), { issuer_url: 'http://10.0.0.5:8080/realms/x' }),
    );
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });

  test('a duplicate name is 409, also after the first one is disabled', async () => {
    const name = uniqueName('dup');
    assert.equal((await register(cast.admin, oidcBody(name))).status, 201);
    const again = await register(cast.admin, oauth2Body(name));
    assert.equal(again.status, 409);
    assert.equal(
      (await api(app.url, 'DELETE', `/api/sso/providers/${name}`, { auth: cast.admin })).status,
      200,
    );
    assert.equal((await register(cast.admin, oidcBody(name))).status, 409);
  });
});

describe('secrets', () => {
  test('the client secret is stored as Fernet ciphertext and never appears in responses or logs', async () => {
    const name = uniqueName('secret');
    const created = await register(cast.admin, oidcBody(name, { tenant_id: cast.tenantA }));
    assert.equal(created.status, 201);
    const [row] = await app.database.sql.query<{ config: string }>(
      'SELECT config FROM sso_providers WHERE name = ?',
      [name],
    );
    const config = JSON.parse(row!.config);
    assert.ok(!row!.config.includes(SECRET), 'no plaintext at rest');
    const ciphertext: string = config.client_secret_encrypted;
    assert.ok(ciphertext.startsWith('gAAAAA'), 'Fernet token');
    assert.equal(config.client_secret, undefined);

    const lists = [
      await api(app.url, 'GET', '/api/sso/providers', { auth: cast.admin }),
      await api(app.url, 'GET', '/api/sso/providers', { auth: session('tenant_admin') }),
      await api(app.url, 'GET', '/api/sso/providers', { auth: session('user') }),
      await api(app.url, 'GET', '/api/sso/providers'),
    ];
    for (const r of [created, ...lists]) {
      const text = JSON.stringify(r.body);
      assert.ok(!text.includes(SECRET), 'no plaintext in responses');
      assert.ok(!text.includes(ciphertext), 'no ciphertext in responses');
      assert.ok(!text.includes('client_id') && !text.includes('issuer_url'), 'no config internals');
    }
    const listed = lists[0]!.body.providers.find((p: { name: string }) => p.name === name);
    assert.deepEqual(listed, {
      name,
      provider_type: 'oidc',
      login_url: `/api/sso/login/${name}`,
      tenant_id: cast.tenantA,
    });
    const logs = app.logs.join('\n');
    assert.ok(!logs.includes(SECRET), 'no plaintext in logs');
    assert.ok(!logs.includes(ciphertext), 'no ciphertext in logs');
    const audit = await app.database.sql.query<{ details: string }>(
      "SELECT details FROM audit_logs WHERE action = 'SSO_PROVIDER_CREATE'",
    );
    assert.ok(!JSON.stringify(audit).includes(SECRET) && !JSON.stringify(audit).includes(ciphertext));
  });
});

describe('who may register and disable', () => {
  test('unauthenticated 401; users, managers and readonly 403 for register and disable', async () => {
    const name = uniqueName('target');
    assert.equal((await register(cast.admin, oidcBody(name, { tenant_id: cast.tenantA }))).status, 201);
    assert.equal((await register(undefined, oidcBody(uniqueName('anon')))).status, 401);
    assert.equal((await api(app.url, 'DELETE', `/api/sso/providers/${name}`)).status, 401);
    for (const who of ['user', 'manager', 'readonly'] as const) {
      const r = await register(session(who), oidcBody(uniqueName(who)));
      assert.equal(r.status, 403, who);
      const d = await api(app.url, 'DELETE', `/api/sso/providers/${name}`, { auth: session(who) });
      assert.equal(d.status, 403, who);
    }
    const still = await api(app.url, 'GET', '/api/sso/providers', { auth: cast.admin });
    assert.ok(
      still.body.providers.some((p: { name: string }) => p.name === name),
      'still active',
    );
  });

  test('a tenant admin cannot register (any tenant) and disables only its own tenant’s providers', async () => {
    for (const body of [
      oidcBody(uniqueName('own')),
      oidcBody(uniqueName('cross'), { tenant_id: cast.tenantB }),
    ]) {
      const r = await register(session('tenant_admin'), body);
      assert.equal(r.status, 403);
      assert.deepEqual(r.body, { error: 'Only a system administrator can register an identity provider' });
    }
    const own = uniqueName('own');
    assert.equal((await register(cast.admin, oidcBody(own, { tenant_id: cast.tenantA }))).status, 201);
    const theirs = uniqueName('theirs');
    assert.equal((await register(cast.admin, oidcBody(theirs, { tenant_id: cast.tenantB }))).status, 201);
    const global = uniqueName('global');
    assert.equal((await register(cast.admin, oidcBody(global))).status, 201);
    for (const name of [theirs, global]) {
      const d = await api(app.url, 'DELETE', `/api/sso/providers/${name}`, { auth: session('tenant_admin') });
      assert.equal(d.status, 403, name);
    }
    const rows = await app.database.sql.query<{ name: string; is_active: unknown }>(
      'SELECT name, is_active FROM sso_providers WHERE name IN (?, ?)',
      [theirs, global],
    );
    assert.ok(
      rows.every((x) => Boolean(x.is_active)),
      'both still active',
    );
    const mine = await api(app.url, 'DELETE', `/api/sso/providers/${own}`, { auth: session('tenant_admin') });
    assert.equal(mine.status, 200);
    // A platform admin may disable any.
    assert.equal(
      (await api(app.url, 'DELETE', `/api/sso/providers/${theirs}`, { auth: cast.admin })).status,
      200,
    );
  });

  test('DELETE of an unknown or already disabled provider is 404; a disabled provider refuses logins', async () => {
    assert.equal(
      (await api(app.url, 'DELETE', '/api/sso/providers/no-such-idp', { auth: cast.admin })).status,
      404,
    );
    const name = uniqueName('off');
    assert.equal((await register(cast.admin, oidcBody(name, { tenant_id: cast.tenantA }))).status, 201);
    assert.equal(
      (await api(app.url, 'DELETE', `/api/sso/providers/${name}`, { auth: cast.admin })).status,
      200,
    );
    assert.equal(
      (await api(app.url, 'DELETE', `/api/sso/providers/${name}`, { auth: cast.admin })).status,
      404,
    );
    const login = await fetch(`${app.url}/api/sso/login/${name}`, { redirect: 'manual' });
    assert.equal(login.status, 404);
    const list = await api(app.url, 'GET', '/api/sso/providers', { auth: cast.admin });
    assert.ok(!list.body.providers.some((p: { name: string }) => p.name === name), 'not listed');
  });
});

describe('listing', () => {
  test('scoped by tenant: users see their tenant and platform providers; anonymous callers need ?tenant=<slug>', async () => {
    const a = uniqueName('list-a');
    const b = uniqueName('list-b');
    const g = uniqueName('list-g');
    assert.equal((await register(cast.admin, oidcBody(a, { tenant_id: cast.tenantA }))).status, 201);
    assert.equal((await register(cast.admin, oidcBody(b, { tenant_id: cast.tenantB }))).status, 201);
    assert.equal((await register(cast.admin, oidcBody(g))).status, 201);
    const names = (r: { body: { providers: { name: string }[] } }) => r.body.providers.map((p) => p.name);

    const user = await api(app.url, 'GET', '/api/sso/providers', { auth: session('user') });
    assert.ok(names(user).includes(a) && names(user).includes(g));
    assert.ok(!names(user).includes(b), 'another tenant’s provider is not shown');
    assert.equal(user.body.providers[0].tenant_id, undefined, 'tenant ids only for administrators');

    const anon = await api(app.url, 'GET', '/api/sso/providers');
    assert.ok(names(anon).includes(g));
    assert.ok(!names(anon).includes(a) && !names(anon).includes(b));

    const [tenantA] = await app.database.sql.query<{ slug: string }>(
      'SELECT slug FROM tenants WHERE id = ?',
      [cast.tenantA],
    );
    const bySlug = await api(app.url, 'GET', `/api/sso/providers?tenant=${tenantA!.slug}`);
    assert.ok(names(bySlug).includes(a) && names(bySlug).includes(g));
    assert.ok(!names(bySlug).includes(b));

    // A tenant with SSO off shows nothing of its own, even by slug.
    await api(app.url, 'PUT', `/api/tenants/${cast.tenantA}/settings`, {
      auth: cast.admin,
      body: { sso_enabled: false },
    });
    const off = await api(app.url, 'GET', `/api/sso/providers?tenant=${tenantA!.slug}`);
    assert.ok(!names(off).includes(a));
    await api(app.url, 'PUT', `/api/tenants/${cast.tenantA}/settings`, {
      auth: cast.admin,
      body: { sso_enabled: true },
    });

    const all = await api(app.url, 'GET', '/api/sso/providers', { auth: cast.admin });
    assert.ok(
      [a, b, g].every((n) => names(all).includes(n)),
      'a system administrator sees every provider',
    );
  });
});

describe('redirect URI rule and editing (issue 28 item 4)', () => {
  test('a redirect_uri that does not end with the provider’s callback path is refused with the path', async () => {
    const name = uniqueName('cb');
    for (const body of [
      oidcBody(name, { redirect_uri: `${app.url}/api/sso/callback/` }),
      oauth2Body(name, { redirect_uri: `${app.url}/api/sso/callback/other-name` }),
      oidcBody(name, { redirect_uri: `${app.url}/api/sso/acs/${name}` }),
    ]) {
      const r = await register(cast.admin, body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.deepEqual(r.body, { error: `redirect_uri: must end with /api/sso/callback/${name}` });
    }
    // A reverse-proxy prefix before the path is the administrator's choice.
    const ok = await register(
      cast.admin,
      oidcBody(name, { redirect_uri: `https://sso.example.test/svc/api/sso/callback/${name}` }),
    );
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  test('a system administrator reads and replaces a provider’s settings; the stored secret is kept and never shown', async () => {
    const name = uniqueName('edit');
    assert.equal((await register(cast.admin, oauth2Body(name, { tenant_id: cast.tenantA }))).status, 201);
    const read = await api(app.url, 'GET', `/api/sso/providers/${name}`, { auth: cast.admin });
    assert.equal(read.status, 200);
    assert.equal(read.body.provider.client_id, 'client-2');
    assert.equal(read.body.provider.tenant_id, cast.tenantA);
    assert.equal(read.body.provider.has_client_secret, true);
    const [before] = await app.database.sql.query<{ config: string }>(
      'SELECT config FROM sso_providers WHERE name = ?',
      [name],
    );
    const ciphertext = JSON.parse(before!.config).client_secret_encrypted as string;

    const put = (auth: Session | undefined, body: Record<string, unknown>) =>
      api(app.url, 'PUT', `/api/sso/providers/${name}`, { auth, body });
    const edited = { ...oauth2Body(name), client_id: 'client-2b', client_secret: '', tenant_id: null };
    const r = await put(cast.admin, edited);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.provider.client_id, 'client-2b');
    assert.equal(r.body.provider.tenant_id, null);
    const [after] = await app.database.sql.query<{ config: string; tenant_id: number | null }>(
      'SELECT config, tenant_id FROM sso_providers WHERE name = ?',
      [name],
    );
    assert.equal(JSON.parse(after!.config).client_secret_encrypted, ciphertext, 'blank secret keeps it');
    assert.equal(JSON.parse(after!.config).client_id, 'client-2b');
    assert.equal(after!.tenant_id, null);
    for (const res of [read, r]) {
      const text = JSON.stringify(res.body);
      assert.ok(!text.includes(SECRET) && !text.includes(ciphertext), 'no secret in responses');
    }

    const refused: [Session | undefined, Record<string, unknown>, number][] = [
      [cast.admin, { ...edited, redirect_uri: `${app.url}/api/sso/callback/` }, 400],
      [cast.admin, { ...edited, provider_type: 'oidc' }, 400],
      [cast.admin, { ...edited, token_url: 'not a url' }, 400],
      [session('tenant_admin'), edited, 403],
      [session('user'), edited, 403],
      [undefined, edited, 401],
    ];
    for (const [auth, body, status] of refused) assert.equal((await put(auth, body)).status, status);
    assert.equal(
      (await api(app.url, 'GET', `/api/sso/providers/${name}`, { auth: session('tenant_admin') })).status,
      403,
    );
    assert.equal(
      (await api(app.url, 'PUT', '/api/sso/providers/no-such-idp', { auth: cast.admin, body: edited }))
        .status,
      404,
    );

    const secret2 = `${SECRET}-2`;
    assert.equal((await put(cast.admin, { ...edited, client_secret: secret2 })).status, 200);
    const [third] = await app.database.sql.query<{ config: string }>(
      'SELECT config FROM sso_providers WHERE name = ?',
      [name],
    );
    assert.notEqual(
      JSON.parse(third!.config).client_secret_encrypted,
      ciphertext,
      'a new secret replaces it',
    );
    assert.ok(!third!.config.includes(secret2));
  });
});
