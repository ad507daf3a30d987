// The model proxy on two API instances over one database (issue 16 item 4): the per-instance call
// context cache (services/proxy/call-context-cache.ts) and quota leases (services/quota/leases.ts).
//   - A token whose context is cached is refused at once on the instance that revoked it, and on the
//     other instance by the pushed invalidation (PostgreSQL: LISTEN/NOTIFY; without it the other
//     instance would serve its cached context for the whole TTL, set long here: a refusal within
//     PUSHED_WITHIN_MS can only come from the push). The spec's 100 ms is a figure, not a check (a
//     loaded CI machine starves B's event loop for longer): every delay is printed at the end beside it.
//   - Two instances with quota leases sharing one user's request quota never let more calls through
//     than the quota, and return everything they leased (nothing stays reserved).
//   - A refusal is never cached; a lowered quota is exact again once no lease is held.
//   - The proxy cache shares its invalidation with the session cache (db/invalidated-cache.ts): a
//     user deactivated or given another role and a tenant suspended through A's admin API drop B's
//     cached contexts of that user / tenant by the push (SQLite: A and B are one instance, at once).
//   - A stored key deleted through A's vault API is no longer used by B (the push).
//   - A user's quota lowered through A's admin API returns B's lease of that user (the push, before
//     the lease's own 2 s lifetime could explain it).
//   - The documented bound (README "Quota leases"): a quota lowered with raw SQL, which sends no push,
//     is passed by at most one lease per instance; with leases off (0) it holds at the next call.
// Cross-instance parts need PostgreSQL; the single-instance parts run on both databases.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { invalidateProxyContexts, proxyContextCache } from '../../services/proxy/call-context-cache.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../services/quota.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant, uniqueName } from '../support/actors.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { dailyQuotaRow } from '../support/quota.ts';
import { api, login, type Session } from '../support/session.ts';

const LEASE = 4;
// Long enough that only a pushed invalidation can explain a refusal within PUSHED_WITHIN_MS.
const TTL_MS = 60_000;
/** Far below TTL_MS: a refusal or drop by then can only come from the pushed invalidation. */
const PUSHED_WITHIN_MS = 5000;
/** The spec's bound (issue 16 item 4), printed beside the measured delays. */
const SPEC_MS = 100;
const ENV = {
  SVC_QUOTA_LEASE_REQUESTS: String(LEASE),
  SVC_QUOTA_LEASE_TOKENS: '10000',
  SVC_PROXY_CONTEXT_CACHE_TTL_MS: String(TTL_MS),
};
const pgOnly = {
  skip: usingPostgres()
    ? false
    : 'two instances exchange invalidations by LISTEN/NOTIFY (run with DATABASE_URL)',
};

let testDb: TestDatabase;
let a: TestApp;
let b: TestApp;
let admin: Session;
let mock: MockProvider;
let tenantId: number;
const tokensSeen: string[] = [];

const STORED_KEY = 'sk-real-scale-out-7e6d5c4b';

/** Stores an openai key pointing at the mock for the tenant (through A's vault API); its id. */
async function storeKey(tenant: number, keyName = 'k', app = a, auth = admin): Promise<number> {
  const r = await api(app.url, 'POST', '/api/remote/api-keys', {
    auth,
    body: {
      provider: 'openai',
      key_name: keyName,
      api_key: STORED_KEY,
      base_url: `${mock.url}/v1`,
      tenant_id: tenant,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.key.id;
}

/** A tenant with its own stored openai key pointing at the mock. */
async function tenantWithKey(): Promise<number> {
  const id = await createTenant(a, admin);
  await storeKey(id);
  return id;
}

before(async () => {
  testDb = await createTestDatabase();
  a = await startTestApp({ testDb, env: ENV });
  b = usingPostgres() ? await startTestApp({ testDb, env: ENV, migrate: false }) : a;
  admin = await login(a.url, ADMIN.username, ADMIN.password);
  mock = await startMockProvider();
  tenantId = await tenantWithKey();
});
after(async () => {
  const sorted = [...delays].sort((x, y) => x - y).map((ms) => ms.toFixed(1));
  console.log(
    `llm-proxy-scale-out: ${b === a ? 'in-process (SQLite)' : 'cross-instance (PostgreSQL)'} invalidation delays ms: ${sorted.join(', ')} (the spec's bound: ${SPEC_MS} ms; ${delays.filter((d) => d > SPEC_MS).length} over it)`,
  );
  await mock?.close();
  if (b !== a) await b?.close();
  await a?.close();
  await testDb?.drop();
});

async function newSession(quotas: { dailyRequestQuota?: number } = {}, tenant = tenantId, app = a) {
  const { db, t } = app.database;
  const [user] = await db
    .insert(t.users)
    .values({
      username: uniqueName('lease-user'),
      passwordHash: 'x',
      role: 'user',
      tenantId: tenant,
      ...quotas,
    })
    .returning({ id: t.users.id });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId: tenant,
    toolName: 'cli_alpha',
    hostName: 'm',
    userId: user!.id,
    status: 'active',
    workspaceType: 'remote',
  });
  const { token, jti } = await tokens(app).issue({
    sessionId,
    userId: user!.id,
    tenantId: tenant,
    provider: 'openai',
  });
  tokensSeen.push(token);
  return { sessionId, userId: user!.id, token, jti };
}

const tokens = (app: TestApp) =>
  proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });

const cacheOf = (app: TestApp) =>
  proxyContextCache(app.database, {
    max: app.settings.SVC_PROXY_CONTEXT_CACHE_SIZE,
    ttlMs: app.settings.SVC_PROXY_CONTEXT_CACHE_TTL_MS,
  });

async function call(app: TestApp, token: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${app.url}/api/remote/llm-proxy/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: r.status, body: await r.json() };
}

/** Every lease returned and every settle written, on both instances. */
async function settleAll() {
  for (const app of b === a ? [a] : [a, b]) {
    await quotaServiceFor(app.deps).returnLeases();
    await quotaServiceFor(app.deps).flush();
  }
}

/**
 * The user's daily row once `used` calls are settled and nothing is reserved (or after 5 s, for the
 * assertions to name what is missing). A call's settle is queued when the server closes its response,
 * which can come after the client has read the whole answer (the settle follows within milliseconds).
 */
async function rowOnceSettled(userId: number, used: number) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    await settleAll();
    const row = await dailyQuotaRow(a, userId);
    if ((row.requestsUsed >= used && row.requestsReserved === 0) || Date.now() > deadline) return row;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a cached token is refused at once after its session is revoked on the same instance', async () => {
  const s = await newSession();
  assert.equal((await call(a, s.token)).status, 200);
  const hits = cacheOf(a).stats().hits;
  assert.equal((await call(a, s.token)).status, 200);
  assert.equal(cacheOf(a).stats().hits, hits + 1, 'the second call was served from the cache');

  await tokens(a).revokeForSession(s.sessionId, 'stopped');
  const r = await call(a, s.token);
  assert.equal(r.status, 401);
  assert.match(r.body.error.message, /revoked/);
  // A refusal is never cached: it is read (and refused) again.
  assert.equal((await call(a, s.token)).status, 401);
});

test('a write other than revocation is seen once its writer calls invalidateProxyContexts', async () => {
  const s = await newSession();
  assert.equal((await call(a, s.token)).status, 200);
  const { db, t } = a.database;
  await db
    .update(t.agentSessions)
    .set({ status: 'stopped' })
    .where(eq(t.agentSessions.sessionId, s.sessionId));
  // Not pushed (raw write): an explicit invalidation of the session's scope makes it visible.
  await invalidateProxyContexts(a.database, { sessionId: s.sessionId });
  const r = await call(a, s.token);
  assert.equal(r.status, 401);
  assert.match(r.body.error.message, /no longer active/);
});

test(
  'a token revoked on instance A is refused on instance B by the pushed invalidation',
  pgOnly,
  async () => {
    await cacheOf(a).ready();
    const s = await newSession();
    await cachedOnB(s);
    await tokens(a).revokeForSession(s.sessionId, 'stopped');
    await refusedOnB(s.token, performance.now(), 401, /revoked/);
  },
);

// SQLite: one instance (b is a), the same bounds with one lease.
test('two instances with quota leases never let more calls through than the quota', async () => {
  const instances = b === a ? 1 : 2;
  const QUOTA = 60;
  const s = await newSession({ dailyRequestQuota: QUOTA });
  // One call on each instance: both now hold a lease of this user's requests.
  assert.equal((await call(a, s.token)).status, 200);
  assert.ok(quotaServiceFor(a.deps).leasesHeld() > 0, 'A holds a lease');
  assert.equal((await call(b, s.token)).status, 200);
  assert.ok(quotaServiceFor(b.deps).leasesHeld() > 0, 'B holds a lease');
  const leased = await dailyQuotaRow(a, s.userId);
  // The leases are reserved in the database (an idle one may already have been returned).
  assert.ok(
    leased.requestsReserved > 0 && leased.requestsReserved <= instances * LEASE,
    `reserved ${leased.requestsReserved}`,
  );

  const results = await Promise.all(
    Array.from({ length: 2 * QUOTA }, (_, i) => call(i % 2 === 0 ? a : b, s.token)),
  );
  const passed = 2 + results.filter((r) => r.status === 200).length;
  const refused = results.filter((r) => r.status === 429).length;
  const statuses = JSON.stringify(results.map((r) => r.status));
  assert.equal(passed + refused, 2 + 2 * QUOTA, `every call answered or refused for quota: ${statuses}`);
  assert.ok(passed <= QUOTA, `${passed} calls passed a quota of ${QUOTA}`);
  // Unused leased requests are the only way a call could be refused below the quota.
  assert.ok(passed >= QUOTA - instances * LEASE, `${passed} calls passed; at most the leases may sit unused`);

  const row = await rowOnceSettled(s.userId, passed);
  assert.equal(row.requestsUsed, passed, 'every answered call counted once');
  assert.equal(row.requestsReserved, 0, 'every lease returned');
  assert.ok(row.requestsUsed <= QUOTA);
  // Once no lease is held the limit is exact again.
  assert.equal((await call(a, s.token)).status, passed < QUOTA ? 200 : 429);
});

test("a quota lowered through the admin API on A returns B's lease of that user: the next call on B is refused by the push", async () => {
  await settleAll();
  const s = await newSession({ dailyRequestQuota: 1000 });
  assert.equal((await call(b, s.token)).status, 200);
  assert.ok(quotaServiceFor(b.deps).leasesHeld() > 0, 'B holds a lease of this user (room left in it)');
  const r = await api(a.url, 'PUT', `/api/admin/users/${s.userId}/quota`, {
    auth: admin,
    body: { daily_request_quota: 1 },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // Without the push B would hand out the rest of its lease (the lease lives up to 2 s): refused
  // before LEASE_PUSH_WITHIN_MS, only the push can have returned it.
  await refusedOnB(s.token, performance.now(), 429, /quota/i, LEASE_PUSH_WITHIN_MS);
  const row = await rowOnceSettled(s.userId, 1);
  assert.equal(row.requestsUsed, 1, 'the one answered call counted');
  assert.equal(row.requestsReserved, 0, 'the lease was returned');
});

test('without room for several leases every call reserves exactly (a small quota)', async () => {
  await settleAll();
  const s = await newSession({ dailyRequestQuota: 3 });
  const results = await Promise.all(Array.from({ length: 6 }, () => call(a, s.token)));
  assert.equal(results.filter((r) => r.status === 200).length, 3);
  assert.equal(quotaServiceFor(a.deps).leasesHeld(), 0, 'no lease below the margin');
  const row = await rowOnceSettled(s.userId, 3);
  assert.equal(row.requestsUsed, 3);
  assert.equal(row.requestsReserved, 0);
});

test('a quota lowered with raw SQL (no push) is passed by at most one lease per instance (the documented bound), then holds', async () => {
  await settleAll();
  const instances = b === a ? 1 : 2;
  const s = await newSession({ dailyRequestQuota: 1000 });
  assert.equal((await call(a, s.token)).status, 200);
  assert.equal((await call(b, s.token)).status, 200);
  assert.ok(quotaServiceFor(b.deps).leasesHeld() > 0, 'leases held');
  // Below what is used already, written without the push (README "Quota leases").
  await a.database.sql.query('UPDATE users SET daily_request_quota = ? WHERE id = ?', [1, s.userId]);
  const statuses: number[] = [];
  for (let i = 0; i < instances * LEASE + 4; i++)
    statuses.push((await call(i % 2 === 0 ? a : b, s.token)).status);
  const passed = statuses.filter((x) => x === 200).length;
  assert.equal(passed + statuses.filter((x) => x === 429).length, statuses.length, JSON.stringify(statuses));
  assert.ok(
    passed <= instances * LEASE,
    `${passed} calls passed the lowered quota: at most ${instances} x ${LEASE}`,
  );
  // Leases used up (or ended): every call now reserves exactly against the new quota.
  assert.deepEqual(statuses.slice(-2), [429, 429], JSON.stringify(statuses));
  const row = await rowOnceSettled(s.userId, 2 + passed);
  assert.equal(row.requestsUsed, 2 + passed, 'every answered call counted once');
  assert.equal(row.requestsReserved, 0, 'every lease returned');
});

test('leases off (SVC_QUOTA_LEASE_REQUESTS=0): every call reserves exactly, a raw-SQL quota change holds at the next call', async () => {
  const exactDb = await createTestDatabase();
  const exact = await startTestApp({ testDb: exactDb, env: { ...ENV, SVC_QUOTA_LEASE_REQUESTS: '0' } });
  try {
    const exactAdmin = await login(exact.url, ADMIN.username, ADMIN.password);
    const tenant = await createTenant(exact, exactAdmin);
    await storeKey(tenant, 'k', exact, exactAdmin);
    const s = await newSession({ dailyRequestQuota: 1000 }, tenant, exact);
    assert.equal((await call(exact, s.token)).status, 200);
    assert.equal(quotaServiceFor(exact.deps).leasesHeld(), 0, 'no lease');
    await exact.database.sql.query('UPDATE users SET daily_request_quota = ? WHERE id = ?', [2, s.userId]);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(exact, s.token)).status);
    assert.deepEqual(statuses, [200, 429, 429, 429], 'exactly the new quota gets through');
    // The last settle is queued when the server closes its response: wait for it (bounded).
    let row = await dailyQuotaRow(exact, s.userId);
    for (let i = 0; i < 250 && (row.requestsUsed < 2 || row.requestsReserved > 0); i++) {
      await quotaServiceFor(exact.deps).flush();
      await new Promise((resolve) => setTimeout(resolve, 20));
      row = await dailyQuotaRow(exact, s.userId);
    }
    assert.equal(row.requestsUsed, 2);
    assert.equal(row.requestsReserved, 0);
  } finally {
    await exact.close();
    await exactDb.drop();
  }
});

/** Every measured refusal / drop delay on B (printed at the end: the figures behind the 100 ms bound). */
/** Below the 2 s a lease lives, so a refusal by then is the push's. */
const LEASE_PUSH_WITHIN_MS = 1500;
const delays: number[] = [];

/** Makes B cache the session's context and proves the next call is served from it. */
async function cachedOnB(s: { token: string; jti: string }) {
  await cacheOf(b).ready();
  assert.equal((await call(b, s.token)).status, 200);
  const hits = cacheOf(b).stats().hits;
  assert.equal((await call(b, s.token)).status, 200);
  assert.equal(cacheOf(b).stats().hits, hits + 1, 'B serves the context from its cache');
}

/** Milliseconds from `since` until B no longer holds the jti's context (fails after PUSHED_WITHIN_MS). */
async function droppedOnB(jti: string, since: number): Promise<number> {
  for (;;) {
    if (cacheOf(b).get(jti) === undefined) {
      delays.push(performance.now() - since);
      return delays.at(-1)!;
    }
    assert.ok(
      performance.now() - since < PUSHED_WITHIN_MS,
      `B still holds the context after ${PUSHED_WITHIN_MS} ms`,
    );
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Milliseconds from `since` until a call on B is refused with `status` (200s before it; fails after `withinMs`). */
async function refusedOnB(
  token: string,
  since: number,
  status: number,
  message: RegExp,
  withinMs = PUSHED_WITHIN_MS,
): Promise<number> {
  for (;;) {
    const r = await call(b, token);
    if (r.status === status) {
      assert.match(r.body.error.message, message);
      delays.push(performance.now() - since);
      return delays.at(-1)!;
    }
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(performance.now() - since < withinMs, `B still serves the call after ${withinMs} ms`);
  }
}

test('a user deactivated on A is refused by the proxy on B by the push', async () => {
  const s = await newSession();
  await cachedOnB(s);
  const r = await api(a.url, 'PUT', `/api/admin/users/${s.userId}`, {
    auth: admin,
    body: { is_active: false },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await refusedOnB(s.token, performance.now(), 403, /disabled/);
  // A refusal is never cached: reactivated, the token works again at once.
  const back = await api(a.url, 'PUT', `/api/admin/users/${s.userId}`, {
    auth: admin,
    body: { is_active: true },
  });
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal((await call(b, s.token)).status, 200);
});

test("a role change on A drops the user's cached contexts on B by the push (other users keep theirs)", async () => {
  const s = await newSession();
  const other = await newSession();
  await cachedOnB(s);
  await cachedOnB(other);
  const r = await api(a.url, 'PUT', `/api/admin/users/${s.userId}`, {
    auth: admin,
    body: { role: 'readonly' },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await droppedOnB(s.jti, performance.now());
  assert.ok(cacheOf(b).get(other.jti), "another user's context stays");
  // The token itself stays good (a role does not govern proxy calls); it is read again and cached.
  assert.equal((await call(b, s.token)).status, 200);
});

test('a tenant suspended on A refuses its tokens on B by the push; other tenants keep their contexts', async () => {
  const suspended = await tenantWithKey();
  const s = await newSession({}, suspended);
  const other = await newSession();
  await cachedOnB(s);
  await cachedOnB(other);
  assert.equal((await api(a.url, 'POST', `/api/tenants/${suspended}/suspend`, { auth: admin })).status, 200);
  await refusedOnB(s.token, performance.now(), 403, /tenant/);
  assert.ok(cacheOf(b).get(other.jti), "another tenant's context stays");
  assert.equal((await api(a.url, 'POST', `/api/tenants/${suspended}/activate`, { auth: admin })).status, 200);
  assert.equal((await call(b, s.token)).status, 200);
});

test("a stored key deleted on A is no longer used on B by the push (the tenant's cached contexts drop)", async () => {
  const tenant = await createTenant(a, admin);
  const keyId = await storeKey(tenant);
  const s = await newSession({}, tenant);
  const other = await newSession();
  await cachedOnB(s);
  await cachedOnB(other);
  const removed = await api(a.url, 'DELETE', `/api/remote/api-keys/${keyId}`, { auth: admin });
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  await refusedOnB(s.token, performance.now(), 400, /No API key configured/);
  assert.ok(cacheOf(b).get(other.jti), "another tenant's context stays");
  // A key stored again is used at once (a refusal is never cached).
  await storeKey(tenant, 'k2');
  assert.equal((await call(b, s.token)).status, 200);
});

test('control: a raw write that skips the invalidation is still served from the cache (the cache is real)', async () => {
  const s = await newSession();
  await cachedOnB(s);
  await a.database.sql.query('UPDATE users SET is_active = ? WHERE id = ?', [false, s.userId]);
  assert.equal((await call(b, s.token)).status, 200, 'served from the cache: the TTL is the bound');
  await invalidateProxyContexts(a.database, { userId: s.userId });
  await refusedOnB(s.token, performance.now(), 403, /disabled/);
});

test('no proxy token or stored key in any log line of either instance', () => {
  for (const app of b === a ? [a] : [a, b])
    for (const line of app.logs) {
      for (const t of tokensSeen) assert.ok(!line.includes(t), 'token logged');
      assert.ok(!line.includes(STORED_KEY), 'stored key logged');
    }
});
