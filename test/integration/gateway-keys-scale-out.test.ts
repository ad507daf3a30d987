// A revoked gateway key stops on every API instance within one second (issue 29 item 1): two instances
// over one PostgreSQL database, each with its per-instance cache of verified keys
// (services/gateway-keys.ts) and a TTL far longer than the bound, so only the pushed invalidation
// (LISTEN/NOTIFY, the proxy's call-context mechanism) can explain the refusal. On SQLite the two are
// one instance: the key is refused at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { existingInvalidatedCache } from '../../db/invalidated-cache.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant, createUser, PASSWORD } from '../support/actors.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';
import { storeMockKey } from '../support/session-teardown.ts';

const ENV = { SVC_PROXY_CONTEXT_CACHE_TTL_MS: '60000' };

let testDb: TestDatabase;
let a: TestApp;
let b: TestApp;
let admin: Session;
let owner: Session;
let mock: MockProvider;

before(async () => {
  testDb = await createTestDatabase();
  a = await startTestApp({ testDb, env: ENV });
  b = usingPostgres() ? await startTestApp({ testDb, env: ENV, migrate: false }) : a;
  admin = await login(a.url, ADMIN.username, ADMIN.password);
  mock = await startMockProvider();
  const tenant = await createTenant(a, admin);
  await storeMockKey(a, admin, tenant, mock);
  const u = await createUser(a, admin, { role: 'user', tenant_id: tenant });
  owner = await login(a.url, u.username, PASSWORD);
});
after(async () => {
  await mock?.close();
  if (b !== a) await b?.close();
  await a?.close();
  await testDb?.drop();
});

const cacheOf = (app: TestApp) => existingInvalidatedCache(app.database, 'gateway-key-contexts')!;

async function call(app: TestApp, key: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${app.url}/api/remote/llm-proxy/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: r.status, body: await r.json() };
}

test('a key revoked through instance A is refused by instance B within one second', async () => {
  const made = await api(a.url, 'POST', '/api/gateway-keys', {
    auth: owner,
    body: { name: 'laptop', provider: 'openai' },
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const key: string = made.body.key;
  assert.equal((await call(b, key)).status, 200);
  await Promise.all([cacheOf(a).ready(), cacheOf(b).ready()]);
  assert.equal((await call(b, key)).status, 200);
  const hits = cacheOf(b).stats().hits;
  assert.equal((await call(b, key)).status, 200);
  assert.equal(cacheOf(b).stats().hits, hits + 1, 'B serves the key from its cache');

  const del = await api(a.url, 'DELETE', `/api/gateway-keys/${made.body.id}`, { auth: owner });
  assert.equal(del.status, 204);
  const revokedAt = performance.now();
  let refusedAfter: number | undefined;
  while (performance.now() - revokedAt < 2000) {
    const r = await call(b, key);
    if (r.status === 401) {
      refusedAfter = performance.now() - revokedAt;
      assert.equal(r.body.error.message, 'Gateway key revoked');
      break;
    }
    assert.equal(r.status, 200);
  }
  assert.ok(refusedAfter !== undefined, 'B never refused the revoked key');
  assert.ok(refusedAfter <= 1000, `B refused after ${refusedAfter.toFixed(1)} ms`);
  console.log(
    `gateway-keys-scale-out: ${b === a ? 'one instance' : 'two instances'}: refused after ${refusedAfter.toFixed(1)} ms`,
  );
  assert.equal((await call(a, key)).status, 401, 'A refuses it too');
});
