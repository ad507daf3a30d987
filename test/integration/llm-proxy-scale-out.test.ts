// The model proxy on two API instances over one database (issue 16 item 4): the per-instance call
// context cache (services/proxy/call-context-cache.ts) and quota leases (services/quota/leases.ts).
//   - A token whose context is cached is refused at once on the instance that revoked it, and on the
//     other instance within 100 ms (PostgreSQL: the invalidation travels by LISTEN/NOTIFY; without
//     it the other instance would serve its cached context for the whole TTL, set long here).
//   - Two instances with quota leases sharing one user's request quota never let more calls through
//     than the quota, and return everything they leased (nothing stays reserved).
//   - A refusal is never cached; a lowered quota is exact again once no lease is held.
// Cross-instance parts need PostgreSQL; the single-instance parts run on both databases.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { dayKey } from '../../domain/quota.ts';
import { invalidateProxyContexts, proxyContextCache } from '../../services/proxy/call-context-cache.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../services/quota.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant, uniqueName } from '../support/actors.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

const LEASE = 4;
// Long enough that only a pushed invalidation can explain a refusal within 100 ms.
const TTL_MS = 60_000;
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

before(async () => {
  testDb = await createTestDatabase();
  a = await startTestApp({ testDb, env: ENV });
  b = usingPostgres() ? await startTestApp({ testDb, env: ENV, migrate: false }) : a;
  admin = await login(a.url, ADMIN.username, ADMIN.password);
  mock = await startMockProvider();
  tenantId = await createTenant(a, admin);
  const r = await api(a.url, 'POST', '/api/remote/api-keys', {
    auth: admin,
    body: {
      provider: 'openai',
      key_name: 'k',
      api_key: 'sk-real-scale-out-7e6d5c4b',
      base_url: `${mock.url}/v1`,
      tenant_id: tenantId,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
});
after(async () => {
  await mock?.close();
  if (b !== a) await b?.close();
  await a?.close();
  await testDb?.drop();
});

async function newSession(quotas: { dailyRequestQuota?: number } = {}) {
  const { db, t } = a.database;
  const [user] = await db
    .insert(t.users)
    .values({ username: uniqueName('lease-user'), passwordHash: 'x', role: 'user', tenantId, ...quotas })
    .returning({ id: t.users.id });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId,
    toolName: 'cli_alpha',
    hostName: 'm',
    userId: user!.id,
    status: 'active',
    workspaceType: 'remote',
  });
  const { token } = await tokens(a).issue({ sessionId, userId: user!.id, tenantId, provider: 'openai' });
  tokensSeen.push(token);
  return { sessionId, userId: user!.id, token };
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

async function dailyRow(userId: number) {
  const { db, t } = a.database;
  const [row] = await db
    .select()
    .from(t.quotaUsage)
    .where(
      and(
        eq(t.quotaUsage.userId, userId),
        eq(t.quotaUsage.period, 'daily'),
        eq(t.quotaUsage.date, dayKey(a.clock.now())),
      ),
    );
  return row!;
}

/** Every lease returned and every settle written, on both instances. */
async function settleAll() {
  for (const app of b === a ? [a] : [a, b]) {
    await quotaServiceFor(app.deps).returnLeases();
    await quotaServiceFor(app.deps).flush();
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

test('a token revoked on instance A is refused on instance B within 100 ms', pgOnly, async () => {
  await Promise.all([cacheOf(a).ready(), cacheOf(b).ready()]);
  const s = await newSession();
  assert.equal((await call(b, s.token)).status, 200);
  const hits = cacheOf(b).stats().hits;
  assert.equal((await call(b, s.token)).status, 200);
  assert.equal(cacheOf(b).stats().hits, hits + 1, 'B serves the context from its cache');

  await tokens(a).revokeForSession(s.sessionId, 'stopped');
  const revokedAt = performance.now();
  let refusedAfter: number | undefined;
  while (performance.now() - revokedAt < 1000) {
    const r = await call(b, s.token);
    if (r.status === 401) {
      refusedAfter = performance.now() - revokedAt;
      assert.match(r.body.error.message, /revoked/);
      break;
    }
    assert.equal(r.status, 200);
  }
  assert.ok(refusedAfter !== undefined, 'B never refused the revoked token');
  assert.ok(refusedAfter <= 100, `B refused after ${refusedAfter.toFixed(1)} ms`);
});

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
  const leased = await dailyRow(s.userId);
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

  await settleAll();
  const row = await dailyRow(s.userId);
  assert.equal(row.requestsUsed, passed, 'every answered call counted once');
  assert.equal(row.requestsReserved, 0, 'every lease returned');
  assert.ok(row.requestsUsed <= QUOTA);
  // Once no lease is held the limit is exact again.
  assert.equal((await call(a, s.token)).status, passed < QUOTA ? 200 : 429);
});

test('without room for several leases every call reserves exactly (a small quota)', async () => {
  await settleAll();
  const s = await newSession({ dailyRequestQuota: 3 });
  const results = await Promise.all(Array.from({ length: 6 }, () => call(a, s.token)));
  assert.equal(results.filter((r) => r.status === 200).length, 3);
  assert.equal(quotaServiceFor(a.deps).leasesHeld(), 0, 'no lease below the margin');
  await settleAll();
  const row = await dailyRow(s.userId);
  assert.equal(row.requestsUsed, 3);
  assert.equal(row.requestsReserved, 0);
});

test('no proxy token in any log line of either instance', () => {
  for (const app of b === a ? [a] : [a, b])
    for (const line of app.logs) for (const t of tokensSeen) assert.ok(!line.includes(t), 'token logged');
});
