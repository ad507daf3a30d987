// The world `npm run fuzz` seeds for each role (test/fuzz/world.ts), on the real API: every role's
// credential works for the operations it is fuzzed against (a session role is who it says it is, the
// agent token polls, the proxy token reaches the provider with the stored key, the upload key
// uploads), the anonymous caller is refused, and the secret and tenant-marker lists hold what the
// hooks' check needs (provider keys, password hashes, tokens; disjoint markers per tenant).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { seedWorld, type World } from '../fuzz/world.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let mock: MockProvider;
let world: World;

before(async () => {
  app = await startTestApp();
  mock = await startMockProvider();
  world = await seedWorld(app, mock.url);
});
after(async () => {
  await app?.close();
  await mock?.close();
});

const role = (name: string) => {
  const r = world.roles.find((x) => x.name === name);
  assert.ok(r, `role ${name}`);
  return r;
};

test('every session role is logged in as the role it is named after', async () => {
  const expected: Record<string, string> = {
    readonly: 'readonly',
    user: 'user',
    manager: 'manager',
    tenant_admin: 'tenant_admin',
    other_tenant_admin: 'tenant_admin',
    legacy_admin: 'admin',
    platform_admin: 'platform_admin',
  };
  for (const [name, roleName] of Object.entries(expected)) {
    const r = role(name);
    const me = await api(app.url, 'GET', '/api/auth/me', { headers: r.headers });
    assert.equal(me.status, 200, `${name}: ${JSON.stringify(me.body)}`);
    assert.equal(JSON.stringify(me.body).includes(`"${roleName}"`), true, `${name} is ${roleName}`);
    assert.ok(r.schemes.includes('session'));
  }
  assert.equal(role('tenant_admin').tenantId, world.tenantA);
  assert.equal(role('other_tenant_admin').tenantId, world.tenantB);
  assert.equal(role('platform_admin').tenantId, null);
  const anon = await api(app.url, 'GET', '/api/auth/me', { headers: role('anonymous').headers });
  assert.equal(anon.status, 401);
});

test('the agent token polls, the proxy token reaches the provider with the stored key, the upload key uploads', async () => {
  const agent = await api(app.url, 'POST', '/api/remote/agent/message', {
    headers: role('agent').headers,
    body: { wait_ms: 0, heartbeat: { active_sessions: [], agent_version: '0.1.0-test' }, events: [] },
  });
  assert.equal(agent.status, 200, JSON.stringify(agent.body));

  const before = mock.requests.length;
  const proxied = await api(app.url, 'POST', '/api/remote/llm-proxy/v1/chat/completions', {
    headers: role('proxy_token').headers,
    body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] },
  });
  assert.equal(proxied.status, 200, JSON.stringify(proxied.body));
  assert.equal(mock.requests.length, before + 1);
  const seen = JSON.stringify(mock.requests.at(-1));
  assert.ok(
    world.secrets.some((s) => s.startsWith('sk-fuzz-provider-') && seen.includes(s)),
    'stored key used',
  );

  const upload = await api(app.url, 'POST', '/api/upload/batch', {
    headers: role('upload_key').headers,
    body: { messages: [] },
  });
  assert.equal(upload.status, 400, 'authenticated: the empty batch is refused on its content, not its key');
  const wrong = await api(app.url, 'POST', '/api/upload/batch', {
    headers: { 'X-Upload-Auth': 'not-the-key' },
    body: { messages: [] },
  });
  assert.equal(wrong.status, 403);
});

test('the lists the secret check reads: keys, hashes, tokens; one marker set per tenant, disjoint', async () => {
  assert.ok(
    world.secrets.filter((s) => s.startsWith('sk-fuzz-provider-')).length >= 4,
    'both key APIs, both tenants',
  );
  assert.ok(
    world.secrets.some((s) => s.startsWith('$2')),
    'password hashes',
  );
  for (const r of world.roles)
    if (r.ownToken) assert.ok(world.secrets.includes(r.ownToken), `${r.name} token listed`);
  assert.ok(world.secrets.includes(app.settings.SVC_ENCRYPTION_KEY!));
  const a = world.tenantMarkers[world.tenantA]!;
  const b = world.tenantMarkers[world.tenantB]!;
  assert.ok(a.length >= 8 && b.length >= 8, `${a.length} / ${b.length}`);
  assert.deepEqual(
    a.filter((m) => b.includes(m)),
    [],
  );
  // What the markers are for: tenant A's admin does not see tenant B's name where B's admin does.
  const bName = b[0]!;
  const own = await api(app.url, 'GET', '/api/admin/users', { headers: role('other_tenant_admin').headers });
  const other = await api(app.url, 'GET', '/api/admin/users', { headers: role('tenant_admin').headers });
  assert.equal(own.status, 200);
  assert.equal(other.status, 200);
  const bUser = world.tenantMarkers[world.tenantB]!.find((m) => JSON.stringify(own.body).includes(m));
  assert.ok(bUser, `tenant B's admin sees a B marker (${bName})`);
  assert.ok(!JSON.stringify(other.body).includes(bUser), "tenant A's admin does not");
});
