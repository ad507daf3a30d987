// Issue 8, item 1 and item 10 (proxy parts), through the real API, database and proxy: the base_url
// policy of both key endpoints per writer, key origin (a tenant admin cannot read, repoint, deactivate
// or delete a system administrator's key), 409 for duplicate names, the proxy's connect-time egress
// refusal for tenant-written keys (and none for system-admin keys), caller-chosen provider accounts
// not forwarded, and key echoes removed from provider error bodies. The app's egress allow-list names
// 127.0.0.1, where the mock provider listens, so tenant-written keys can reach it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import type { KeyProvider } from '../../domain/key-providers.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant, createUser, uniqueName } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

const TENANT_KEY = 'sk-tenant-written-0123456789abcdef';
const SYSTEM_KEY = 'sk-system-stored-fedcba9876543210';
const SYSTEM_ADMIN_KEY =
  'This key was stored by a system administrator; only a system administrator can change or delete it';
const DUPLICATE = 'An API key with this key_name already exists for the tenant';
const refusal = (host: string, what: string, verb = 'is') =>
  `base_url host ${host} ${verb} ${what}, which keys stored by a tenant administrator may not reach (ask a system administrator to add it to egress.allow_hosts)`;

let app: TestApp;
let mock: MockProvider;
let echo: { url: string; close: () => Promise<void> };
let admin: Session;

/** A tenant with its own tenant admin (each scenario gets one, so the proxy's key choice is clear). */
async function tenantWithAdmin(): Promise<{ id: number; tenantAdmin: Session }> {
  const id = await createTenant(app, admin);
  const u = await createUser(app, admin, { role: 'tenant_admin', tenant_id: id });
  return { id, tenantAdmin: await login(app.url, u.username, u.password) };
}

/** A remote session and its proxy token, as the session workflow issues them. */
async function proxyToken(tenantId: number, provider: KeyProvider = 'openai'): Promise<string> {
  const { db, t } = app.database;
  const [user] = await db
    .insert(t.users)
    .values({ username: uniqueName('egress-user'), passwordHash: 'x', role: 'user', tenantId })
    .returning({ id: t.users.id });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId,
    toolName: 'cli_alpha',
    hostName: 'machine-egress-test',
    userId: user!.id,
    status: 'active',
    workspaceType: 'remote',
    remoteMachineId: 'machine-egress-test',
  });
  const service = proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });
  return (await service.issue({ sessionId, userId: user!.id, tenantId, provider })).token;
}

const openai = (token: string, extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) =>
  new OpenAI({ apiKey: token, baseURL: `${app.url}/api/remote/llm-proxy`, maxRetries: 0, ...extra });
const chat = (client: OpenAI) =>
  client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });

/** A provider that answers every call as OpenAI does for a wrong key: echoing it, masked. */
async function startKeyEchoProvider() {
  const server = http.createServer((req, res) => {
    const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const masked = `${key.slice(0, 6)}${'*'.repeat(20)}${key.slice(-4)}`;
    const body = JSON.stringify({
      error: {
        message: `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
        echoed: key,
      },
    });
    res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function auditOf(r: { res: Response }) {
  const logs = await api(app.url, 'GET', '/api/audit/logs?limit=1000', { auth: admin });
  return logs.body.logs.find((l: any) => l.request_id === r.res.headers.get('x-request-id'));
}

before(async () => {
  app = await startTestApp({ env: { SVC_EGRESS__ALLOW_HOSTS: '127.0.0.1' } });
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  mock = await startMockProvider();
  echo = await startKeyEchoProvider();
});
after(async () => {
  await echo?.close();
  await mock?.close();
  await app?.close();
});

describe('base_url policy on write', () => {
  test('a tenant admin cannot point a key at loopback, private, link-local or metadata hosts, in any spelling', async () => {
    const { tenantAdmin } = await tenantWithAdmin();
    const cases: [string, string][] = [
      [
        'https://169.254.169.254/latest/meta-data',
        refusal('169.254.169.254', 'a link-local or metadata address'),
      ],
      ['https://2852039166/', refusal('169.254.169.254', 'a link-local or metadata address')],
      ['https://0x7f.0.0.2/', refusal('127.0.0.2', 'a loopback address')],
      ['https://[::ffff:10.0.0.1]/v1', refusal('::ffff:a00:1', 'a private network address')],
      ['https://[fd00:ec2::254]/', refusal('fd00:ec2::254', 'a private network address')],
      ['https://192.168.0.10:7233/', refusal('192.168.0.10', 'a private network address')],
      ['https://localhost:8233/', refusal('localhost', 'a local or internal host name')],
      ['https://temporal.localhost/', refusal('temporal.localhost', 'a local or internal host name')],
      [
        'https://metadata.google.internal/',
        refusal('metadata.google.internal', 'a local or internal host name'),
      ],
      ['https://0.0.0.0/', refusal('0.0.0.0', 'an unspecified address')],
      ['http://api.example.com/v1', 'base_url must use https for keys stored by a tenant administrator'],
      ['https://me:pw@api.example.com/v1', 'base_url must not contain credentials'],
    ];
    for (const [base_url, error] of cases) {
      const r = await api(app.url, 'POST', '/api/api-keys', {
        auth: tenantAdmin,
        body: { provider: 'openai', key_name: uniqueName('k'), api_key: TENANT_KEY, base_url },
      });
      assert.deepEqual([r.status, r.body], [400, { error }], base_url);
    }
    // Repointing an existing key is checked the same way.
    const ok = await api(app.url, 'POST', '/api/api-keys', {
      auth: tenantAdmin,
      body: { provider: 'openai', key_name: uniqueName('k'), api_key: TENANT_KEY },
    });
    assert.equal(ok.status, 201);
    const put = await api(app.url, 'PUT', `/api/api-keys/${ok.body.key.id}`, {
      auth: tenantAdmin,
      body: { base_url: 'https://169.254.169.254/' },
    });
    assert.deepEqual(
      [put.status, put.body],
      [400, { error: refusal('169.254.169.254', 'a link-local or metadata address') }],
    );
  });

  test('a name that does not resolve is accepted at write time (checked again at connect time)', async () => {
    const { tenantAdmin } = await tenantWithAdmin();
    const r = await api(app.url, 'POST', '/api/api-keys', {
      auth: tenantAdmin,
      body: {
        provider: 'openai',
        key_name: 'later',
        api_key: TENANT_KEY,
        base_url: 'https://gateway.invalid/v1/',
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.key.base_url, 'https://gateway.invalid/v1');
    assert.equal(r.body.key.created_by_system_admin, false);
  });

  test('system administrators may point a key anywhere, on both endpoints, audited with the host; never with credentials', async () => {
    const { id } = await tenantWithAdmin();
    const viaTenantRoute = await api(app.url, 'POST', '/api/api-keys', {
      auth: admin,
      body: {
        tenant_id: id,
        provider: 'openai',
        key_name: 'gw',
        api_key: SYSTEM_KEY,
        base_url: 'http://10.0.0.5:8080/v1',
      },
    });
    assert.equal(viaTenantRoute.status, 201, JSON.stringify(viaTenantRoute.body));
    assert.equal(viaTenantRoute.body.key.created_by_system_admin, true);
    assert.equal((await auditOf(viaTenantRoute)).details.base_url_host, '10.0.0.5');

    const viaVault = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        tenant_id: id,
        provider: 'anthropic',
        key_name: 'gw2',
        api_key: SYSTEM_KEY,
        base_url: 'http://localhost:9/',
      },
    });
    assert.equal(viaVault.status, 201, JSON.stringify(viaVault.body));
    assert.equal(viaVault.body.key.created_by_system_admin, true);
    assert.equal((await auditOf(viaVault)).details.base_url_host, 'localhost');

    for (const path of ['/api/api-keys', '/api/remote/api-keys']) {
      const r = await api(app.url, 'POST', path, {
        auth: admin,
        body: {
          tenant_id: id,
          provider: 'gemini',
          key_name: uniqueName('c'),
          api_key: SYSTEM_KEY,
          base_url: 'http://u:p@10.0.0.5/',
        },
      });
      assert.deepEqual([r.status, r.body], [400, { error: 'base_url must not contain credentials' }], path);
    }
  });
});

describe('key origin', () => {
  test("a tenant admin can neither read, repoint, deactivate nor delete a system administrator's key", async () => {
    const { id, tenantAdmin } = await tenantWithAdmin();
    const stored = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        tenant_id: id,
        provider: 'openai',
        key_name: 'platform key',
        api_key: SYSTEM_KEY,
        base_url: `${mock.url}/v1`,
      },
    });
    assert.equal(stored.status, 201);
    const keyId = stored.body.key.id;

    const list = await api(app.url, 'GET', '/api/api-keys', { auth: tenantAdmin });
    const seen = list.body.keys.find((k: any) => k.id === keyId);
    assert.equal(seen.masked_key, '****');
    assert.equal(seen.created_by_system_admin, true);
    assert.ok(!JSON.stringify(list.body).includes(SYSTEM_KEY.slice(-4)));

    for (const body of [
      { base_url: 'https://attacker.example/v1' },
      { is_active: false },
      { key_name: 'mine' },
    ]) {
      const r = await api(app.url, 'PUT', `/api/api-keys/${keyId}`, { auth: tenantAdmin, body });
      assert.deepEqual([r.status, r.body], [403, { error: SYSTEM_ADMIN_KEY }], JSON.stringify(body));
      assert.equal((await auditOf(r)).details.reason, 'system_admin_key');
    }
    const del = await api(app.url, 'DELETE', `/api/api-keys/${keyId}`, { auth: tenantAdmin });
    assert.deepEqual([del.status, del.body], [403, { error: SYSTEM_ADMIN_KEY }]);

    const after = await api(app.url, 'GET', `/api/remote/api-keys?tenant_id=${id}`, { auth: admin });
    const row = after.body.keys.find((k: any) => k.id === keyId);
    assert.deepEqual([row.base_url, row.is_active, row.key_name], [`${mock.url}/v1`, true, 'platform key']);
    // The system administrator still can.
    const adminPut = await api(app.url, 'PUT', `/api/api-keys/${keyId}?tenant_id=${id}`, {
      auth: admin,
      body: { is_active: false },
    });
    assert.equal(adminPut.status, 200);
  });

  test('duplicate key names answer 409 on both endpoints', async () => {
    const { id, tenantAdmin } = await tenantWithAdmin();
    const first = await api(app.url, 'POST', '/api/api-keys', {
      auth: tenantAdmin,
      body: { provider: 'openai', key_name: 'same', api_key: TENANT_KEY },
    });
    assert.equal(first.status, 201);
    const again = await api(app.url, 'POST', '/api/api-keys', {
      auth: tenantAdmin,
      body: { provider: 'anthropic', key_name: 'same', api_key: `${TENANT_KEY}-2` },
    });
    assert.deepEqual([again.status, again.body], [409, { error: DUPLICATE }]);
    const vault = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: { tenant_id: id, provider: 'gemini', key_name: 'same', api_key: SYSTEM_KEY },
    });
    assert.deepEqual([vault.status, vault.body], [409, { error: DUPLICATE }]);
    const other = await api(app.url, 'POST', '/api/api-keys', {
      auth: tenantAdmin,
      body: { provider: 'openai', key_name: 'other', api_key: `${TENANT_KEY}-3` },
    });
    const rename = await api(app.url, 'PUT', `/api/api-keys/${other.body.key.id}`, {
      auth: tenantAdmin,
      body: { key_name: 'same' },
    });
    assert.deepEqual([rename.status, rename.body], [409, { error: DUPLICATE }]);
  });
});

describe('the proxy at connect time', () => {
  test('a tenant-written key on the allow-listed mock works; the caller cannot pick the billed organisation or project', async () => {
    const { id, tenantAdmin } = await tenantWithAdmin();
    const r = await api(app.url, 'POST', '/api/api-keys', {
      auth: tenantAdmin,
      body: { provider: 'openai', key_name: 'mine', api_key: TENANT_KEY, base_url: `${mock.url}/v1` },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const before = mock.requests.length;
    const done = await chat(
      openai(await proxyToken(id), { organization: 'org-attacker', project: 'proj-attacker' }),
    );
    assert.equal(done.usage?.total_tokens, 18);
    const seen = mock.requests[before]!;
    assert.equal(seen.headers.authorization, `Bearer ${TENANT_KEY}`);
    assert.equal(seen.headers['openai-organization'], undefined);
    assert.equal(seen.headers['openai-project'], undefined);
  });

  test('a tenant-written key whose host is not allowed is refused with 403 egress_denied; a system key there works', async () => {
    const { id, tenantAdmin } = await tenantWithAdmin();
    // Written while allowed, then repointed behind the API's back (as if the allow-list had changed):
    // the proxy must not trust what was checked at write time.
    const r = await api(app.url, 'POST', '/api/api-keys', {
      auth: tenantAdmin,
      body: { provider: 'openai', key_name: 'mine', api_key: TENANT_KEY, base_url: `${mock.url}/v1` },
    });
    const { db, t } = app.database;
    const port = new URL(mock.url).port;
    await db
      .update(t.apiKeyStore)
      .set({ baseUrl: `http://localhost:${port}/v1` })
      .where(eq(t.apiKeyStore.id, r.body.key.id));
    const before = mock.requests.length;
    const token = await proxyToken(id);
    await assert.rejects(chat(openai(token)), (e: any) => {
      assert.equal(e.status, 403);
      assert.deepEqual(e.error, {
        message:
          "The stored key's base URL points to an address that keys stored by a tenant administrator may not reach",
        type: 'egress_denied',
      });
      return true;
    });
    assert.equal(mock.requests.length, before, 'nothing reached the host');

    // The same URL stored by a system administrator (a newer key: the proxy uses the newest) is reached.
    const sys = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        tenant_id: id,
        provider: 'openai',
        key_name: 'sys',
        api_key: SYSTEM_KEY,
        base_url: `http://localhost:${port}/v1`,
      },
    });
    assert.equal(sys.status, 201);
    const done = await chat(openai(token));
    assert.equal(done.usage?.total_tokens, 18);
    assert.equal(mock.requests.at(-1)!.headers.authorization, `Bearer ${SYSTEM_KEY}`);
  });

  test('a provider error echoing the key reaches the caller with the key removed', async () => {
    const { id } = await tenantWithAdmin();
    const stored = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        tenant_id: id,
        provider: 'openai',
        key_name: 'echo',
        api_key: SYSTEM_KEY,
        base_url: `${echo.url}/v1`,
      },
    });
    assert.equal(stored.status, 201);
    const res = await fetch(`${app.url}/api/remote/llm-proxy/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await proxyToken(id)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 401);
    const text = await res.text();
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
    const body = JSON.parse(text);
    assert.equal(
      body.error.message,
      'Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.',
    );
    assert.equal(body.error.echoed, '[redacted]');
    assert.equal(body.error.code, 'invalid_api_key');
    for (const fragment of [SYSTEM_KEY, SYSTEM_KEY.slice(0, 6), SYSTEM_KEY.slice(-4)])
      assert.ok(!text.includes(fragment), fragment);
  });
});
