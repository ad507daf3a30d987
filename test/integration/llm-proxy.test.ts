// The model proxy end to end, through the real API and database: the official `openai` and
// `@anthropic-ai/sdk` clients (and raw fetch for Gemini) pointed at /api/remote/llm-proxy with a proxy
// token as their API key, against a local mock provider that records what it receives.
// Covers: the real key reaches the provider and the proxy token never does; usage of every wire
// format, streaming and not, lands in quota_usage, tenant_usage, daily_usage and the session totals;
// token refusals; quota refusals and their recovery the next day / month (moved clock); concurrent
// calls at the limit; a client disconnect aborting the upstream call; fail-closed quota checks; the
// bare POST endpoint; audit of refusals; and no secret in any log line.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { signProxyToken } from '../../domain/crypto/proxy-token.ts';
import type { KeyProvider } from '../../domain/key-providers.ts';
import { dayKey, monthKey } from '../../domain/quota.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../services/quota.ts';
import { proxyTokenSecret } from '../../services/secrets.ts';
import { MOCK_EXPECTED_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant, createUser, uniqueName } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

const REAL_KEYS: Record<KeyProvider, string> = {
  openai: 'sk-real-openai-4f1c9e2b7a6d5c3e',
  anthropic: 'sk-ant-real-8b3d2f1e0a9c7b6d',
  gemini: 'AIza-real-gemini-5e4d3c2b1a0f9e8d',
};

let app: TestApp;
let admin: Session;
let mock: MockProvider;
let tenantId: number;
let proxyUrl: string;
/** Every proxy token a test used, to search the logs for at the end. */
const issuedTokens: string[] = [];

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  mock = await startMockProvider();
  proxyUrl = `${app.url}/api/remote/llm-proxy`;
  tenantId = await createTenant(app, admin);
  await storeKeys(tenantId);
});
after(async () => {
  await mock?.close();
  await app?.close();
});

function baseUrlFor(provider: KeyProvider): string {
  return provider === 'openai' ? `${mock.url}/v1` : mock.url;
}

async function storeKeys(tenant: number, providers: KeyProvider[] = ['openai', 'anthropic', 'gemini']) {
  for (const provider of providers) {
    const r = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        provider,
        key_name: `${provider} key`,
        api_key: REAL_KEYS[provider],
        base_url: baseUrlFor(provider),
        tenant_id: tenant,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
}

interface Quotas {
  dailyTokenQuota?: number | null;
  monthlyTokenQuota?: number | null;
  dailyRequestQuota?: number | null;
  monthlyRequestQuota?: number | null;
}

/** A user straight in the database (these tests never log in as them). */
async function newUser(opts: { tenant?: number; quotas?: Quotas } = {}): Promise<number> {
  const { db, t } = app.database;
  const [row] = await db
    .insert(t.users)
    .values({
      username: uniqueName('proxy-user'),
      passwordHash: 'not-a-login',
      role: 'user',
      tenantId: opts.tenant ?? tenantId,
      ...opts.quotas,
    })
    .returning({ id: t.users.id });
  return row!.id;
}

interface TestSession {
  sessionId: string;
  userId: number;
  token: string;
}

/** A remote session row and a proxy token for it, issued the way the session workflow does. */
async function newSession(
  provider: KeyProvider,
  opts: { userId?: number; tenant?: number; quotas?: Quotas } = {},
): Promise<TestSession> {
  const tenant = opts.tenant ?? tenantId;
  const userId = opts.userId ?? (await newUser({ tenant, quotas: opts.quotas }));
  const sessionId = randomUUID();
  const { db, t } = app.database;
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId: tenant,
    toolName: provider === 'anthropic' ? 'cli_beta' : 'cli_alpha',
    hostName: 'machine-proxy-test',
    userId,
    status: 'active',
    workspaceType: 'remote',
    remoteMachineId: 'machine-proxy-test',
  });
  const { token } = await tokenService().issue({ sessionId, userId, tenantId: tenant, provider });
  issuedTokens.push(token);
  return { sessionId, userId, token };
}

const tokenService = () =>
  proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });

const openai = (token: string) => new OpenAI({ apiKey: token, baseURL: proxyUrl, maxRetries: 0 });
const anthropic = (token: string) => new Anthropic({ apiKey: token, baseURL: proxyUrl, maxRetries: 0 });

const chat = (client: OpenAI) =>
  client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });

/** The user's quota_usage rows of today and this month (by the test clock). */
async function userUsage(userId: number) {
  const { db, t } = app.database;
  const now = app.clock.now();
  const rows = await db.select().from(t.quotaUsage).where(eq(t.quotaUsage.userId, userId));
  const daily = rows.find((r) => r.period === 'daily' && r.date === dayKey(now));
  const monthly = rows.find((r) => r.period === 'monthly' && r.date === monthKey(now));
  return { daily, monthly };
}

/**
 * Nothing of a refused or failed call stays reserved beyond the one lease this instance may hold of
 * the user's requests (leases are on by default; README "Quota leases"); once returned, nothing.
 */
async function assertReservedAtMostALease(userId: number) {
  const lease = app.settings.SVC_QUOTA_LEASE_REQUESTS;
  assert.ok(lease > 0, 'leases are on by default');
  const reserved = (await userUsage(userId)).daily?.requestsReserved ?? 0;
  assert.ok(reserved <= lease, `reserved ${reserved}: at most one lease`);
  await quotaServiceFor(app.deps).returnLeases();
  await quotaServiceFor(app.deps).flush();
  assert.equal((await userUsage(userId)).daily?.requestsReserved ?? 0, 0, 'nothing stays reserved');
}

async function sessionRow(sessionId: string) {
  const { db, t } = app.database;
  const [row] = await db.select().from(t.agentSessions).where(eq(t.agentSessions.sessionId, sessionId));
  return row!;
}

/** Settles happen when the response ends, just after the client has it: wait for the counters. */
async function waitForUsage(userId: number, requests: number) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const u = await userUsage(userId);
    if (u.daily && u.daily.requestsUsed >= requests && u.daily.requestsReserved === 0) return u;
    if (Date.now() > deadline) throw new Error(`usage of user ${userId} never reached ${requests} requests`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function expectRecorded(s: TestSession, expected: { tokens: number; input: number; output: number }) {
  const u = await waitForUsage(s.userId, 1);
  assert.equal(u.daily!.requestsUsed, 1);
  assert.equal(u.daily!.tokensUsed, expected.tokens);
  assert.equal(u.monthly!.requestsUsed, 1);
  assert.equal(u.monthly!.tokensUsed, expected.tokens);
  await quotaServiceFor(app.deps).flush();
  const row = await sessionRow(s.sessionId);
  assert.equal(row.totalTokens, expected.tokens);
  assert.equal(row.totalInputTokens, expected.input);
  assert.equal(row.totalOutputTokens, expected.output);
  assert.equal(row.requestCount, 1);
}

/** Last request the mock received, with the proof that only the real key travelled. */
function assertRealKeyOnly(provider: KeyProvider, token: string) {
  const rec = mock.requests.at(-1)!;
  const seen = JSON.stringify({ path: rec.path, headers: rec.headers, body: rec.body });
  assert.ok(!seen.includes(token), 'the provider never sees the proxy token');
  assert.ok(!seen.includes('svcpt_'), 'no proxy token of any kind reaches the provider');
  if (provider === 'openai') assert.equal(rec.headers.authorization, `Bearer ${REAL_KEYS.openai}`);
  if (provider === 'anthropic') assert.equal(rec.headers['x-api-key'], REAL_KEYS.anthropic);
  if (provider === 'gemini') assert.equal(rec.headers['x-goog-api-key'], REAL_KEYS.gemini);
  return rec;
}

const expected = (f: keyof typeof MOCK_EXPECTED_USAGE) => ({
  tokens: MOCK_EXPECTED_USAGE[f].totalTokens,
  input: MOCK_EXPECTED_USAGE[f].inputTokens,
  output: MOCK_EXPECTED_USAGE[f].outputTokens,
});

describe('key vault: /api/remote/api-keys', () => {
  test('system admin only; invalid provider 400; masked listing; encrypted at rest; audited', async () => {
    const secret = 'sk-vault-test-0a1b2c3d4e5f6a7b8c9d';
    const tenantAdmin = await createUser(app, admin, { role: 'tenant_admin', tenant_id: tenantId });
    const other = await login(app.url, tenantAdmin.username, tenantAdmin.password);
    for (const [method, path] of [
      ['GET', '/api/remote/api-keys'],
      ['POST', '/api/remote/api-keys'],
      ['DELETE', '/api/remote/api-keys/1'],
    ] as const) {
      const r = await api(app.url, method, path, {
        auth: other,
        body: method === 'POST' ? { provider: 'openai', key_name: 'x', api_key: secret } : undefined,
      });
      assert.equal(r.status, 403, `${method} ${path} as a tenant admin`);
    }
    assert.equal((await api(app.url, 'GET', '/api/remote/api-keys')).status, 401);

    const bad = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: { provider: 'mistral', key_name: 'x', api_key: secret },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /provider must be one of openai, anthropic, gemini/);
    for (const body of [
      { provider: 'openai', key_name: 'x' },
      { provider: 'openai', api_key: secret },
      { provider: 'openai', key_name: 'x', api_key: secret, base_url: 'ftp://x' },
      { provider: 'openai', key_name: 'x', api_key: secret, base_url: 'https://u:p@x.example' },
    ]) {
      const r = await api(app.url, 'POST', '/api/remote/api-keys', { auth: admin, body });
      assert.equal(r.status, 400, JSON.stringify(body));
    }

    const created = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: { provider: 'openai', key_name: 'vault test', api_key: secret, tenant_id: tenantId },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.key.masked_key, 'sk-...8c9d');
    assert.equal(created.body.key.base_url, null);
    assert.ok(!JSON.stringify(created.body).includes(secret), 'no key value in the response');
    const dup = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: { provider: 'openai', key_name: 'again', api_key: secret, tenant_id: tenantId },
    });
    assert.equal(dup.status, 409);

    const list = await api(app.url, 'GET', `/api/remote/api-keys?tenant_id=${tenantId}`, { auth: admin });
    assert.equal(list.status, 200);
    assert.ok(!JSON.stringify(list.body).includes(secret), 'listings are masked');
    const listed = list.body.keys.find((k: any) => k.id === created.body.key.id);
    assert.equal(listed.masked_key, 'sk-...8c9d');
    assert.equal(listed.provider, 'openai');
    assert.equal(listed.is_active, true);
    assert.ok(list.body.keys.every((k: any) => k.tenant_id === tenantId));

    const { db, t } = app.database;
    const [row] = await db.select().from(t.apiKeyStore).where(eq(t.apiKeyStore.id, created.body.key.id));
    assert.ok(row!.encryptedKey.startsWith('gAAAAA'), 'stored as a Fernet token');
    assert.ok(!row!.encryptedKey.includes(secret));

    const del = await api(app.url, 'DELETE', `/api/remote/api-keys/${created.body.key.id}`, { auth: admin });
    assert.equal(del.status, 200);
    const again = await api(app.url, 'DELETE', `/api/remote/api-keys/${created.body.key.id}`, {
      auth: admin,
    });
    assert.equal(again.status, 404);

    const audit = await db.select().from(t.auditLogs);
    const actions = audit.map((a) => `${a.action}:${a.success}`);
    for (const a of [
      'REMOTE_API_KEY_CREATE:true',
      'REMOTE_API_KEY_DELETE:true',
      'REMOTE_API_KEY_CREATE:false',
    ])
      assert.ok(actions.includes(a), `audited ${a}`);
    assert.ok(!JSON.stringify(audit).includes(secret), 'no key value in the audit log');
    assert.ok(!app.logs.join('').includes(secret), 'no key value in the logs');
  });
});

describe('forwarding with the official clients', () => {
  test('openai chat, not streamed: real key upstream, usage recorded everywhere', async () => {
    const s = await newSession('openai');
    const reply = await chat(openai(s.token));
    assert.equal(reply.choices[0]!.message.content, 'tok0 tok1 tok2 ');
    assert.equal(assertRealKeyOnly('openai', s.token).path, '/v1/chat/completions');
    await expectRecorded(s, expected('openai-chat'));
    const { db, t } = app.database;
    const [tenantDay] = await db
      .select()
      .from(t.tenantUsage)
      .where(and(eq(t.tenantUsage.tenantId, tenantId), eq(t.tenantUsage.date, dayKey(app.clock.now()))));
    assert.ok(tenantDay!.requestsMade >= 1 && tenantDay!.tokensUsed >= 18);
    assert.equal(tenantDay!.requestsReserved, 0);
    const [daily] = await db
      .select()
      .from(t.dailyUsage)
      .where(and(eq(t.dailyUsage.tenantId, tenantId), eq(t.dailyUsage.toolName, 'cli_alpha')));
    assert.ok(daily!.requestCount >= 1 && daily!.tokensUsed >= 18);
    assert.equal(daily!.hostName, 'machine-proxy-test');
    assert.match(daily!.modelsUsed ?? '', /gpt-test/);
  });

  test('openai chat, streamed with include_usage', async () => {
    const s = await newSession('openai');
    const stream = await openai(s.token).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'tok0 tok1 tok2 ');
    assertRealKeyOnly('openai', s.token);
    await expectRecorded(s, expected('openai-chat'));
  });

  test('openai responses API (Codex), streamed and not', async () => {
    const s = await newSession('openai');
    const client = openai(s.token);
    const r = await client.responses.create({ model: 'gpt-test', input: 'hi' });
    assert.equal(r.output_text, 'tok0 tok1 tok2 ');
    assert.equal(assertRealKeyOnly('openai', s.token).path, '/v1/responses');
    await expectRecorded(s, expected('openai-responses'));

    const s2 = await newSession('openai');
    const stream = await openai(s2.token).responses.create({ model: 'gpt-test', input: 'hi', stream: true });
    let done = false;
    for await (const event of stream) if (event.type === 'response.completed') done = true;
    assert.ok(done);
    await expectRecorded(s2, expected('openai-responses'));
  });

  test('anthropic messages (Claude Code), streamed and not, with cache tokens', async () => {
    const s = await newSession('anthropic');
    const msg = await anthropic(s.token).messages.create({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(msg.content[0]?.type, 'text');
    assert.equal(assertRealKeyOnly('anthropic', s.token).path, '/v1/messages');
    await expectRecorded(s, expected('anthropic-messages'));

    const s2 = await newSession('anthropic');
    const stream = anthropic(s2.token).messages.stream({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const final = await stream.finalMessage();
    assert.equal(final.usage.output_tokens, 8);
    assertRealKeyOnly('anthropic', s2.token);
    await expectRecorded(s2, expected('anthropic-messages'));
  });

  test('gemini generateContent and streamGenerateContent (x-goog-api-key and ?key=)', async () => {
    const s = await newSession('gemini');
    const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    const r = await fetch(`${proxyUrl}/v1beta/models/gemini-test:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': s.token },
      body,
    });
    assert.equal(r.status, 200);
    assert.ok(((await r.json()) as any).usageMetadata);
    assertRealKeyOnly('gemini', s.token);
    await expectRecorded(s, expected('gemini-generate'));

    const s2 = await newSession('gemini');
    const streamed = await fetch(
      `${proxyUrl}/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=${encodeURIComponent(s2.token)}`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body },
    );
    assert.equal(streamed.status, 200);
    assert.match(await streamed.text(), /usageMetadata/);
    const rec = assertRealKeyOnly('gemini', s2.token);
    assert.equal(
      rec.path,
      '/v1beta/models/gemini-test:streamGenerateContent?alt=sse',
      'the ?key= is dropped',
    );
    await expectRecorded(s2, expected('gemini-generate'));
  });

  test('a stream sent without include_usage is still counted with real tokens (the proxy asks for them)', async () => {
    const s = await newSession('openai');
    const stream = await openai(s.token).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true, // no include_usage (more in llm-proxy-metering.test.ts)
    });
    for await (const _ of stream);
    const u = await waitForUsage(s.userId, 1);
    assert.equal(u.daily!.requestsUsed, 1);
    assert.equal(u.daily!.tokensUsed, 18);
  });

  test('model listings pass through and count as one request without tokens', async () => {
    const s = await newSession('openai');
    const models = await openai(s.token).models.list();
    assert.equal(models.data[0]!.id, 'mock-model');
    assertRealKeyOnly('openai', s.token);
    const u = await waitForUsage(s.userId, 1);
    assert.equal(u.daily!.requestsUsed, 1);
    assert.equal(u.daily!.tokensUsed, 0);
  });

  test('only allow-listed provider headers come back: no Set-Cookie, no server internals; nosniff', async () => {
    const s = await newSession('openai');
    mock.setBehaviour({
      extraHeaders: {
        'set-cookie': 'provider_session=abc; Path=/',
        'x-internal-upstream': 'pod-17.internal',
        server: 'envoy',
        'x-ratelimit-remaining-requests': '99',
      },
    });
    try {
      const res = await fetch(`${proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 200);
      await res.text();
      assert.equal(res.headers.get('set-cookie'), null);
      assert.equal(res.headers.get('x-internal-upstream'), null);
      assert.notEqual(res.headers.get('server'), 'envoy');
      assert.match(res.headers.get('x-request-id') ?? '', /^req_mock_/);
      assert.equal(res.headers.get('x-ratelimit-remaining-requests'), '99');
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    } finally {
      mock.setBehaviour({ extraHeaders: undefined });
    }
    const refused = await fetch(`${proxyUrl}/v1/chat/completions`, { method: 'POST' });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('x-content-type-options'), 'nosniff');
  });

  test('provider errors pass through with their status and are not counted', async () => {
    const s = await newSession('anthropic');
    mock.setBehaviour({ errorStatus: 400 });
    try {
      await assert.rejects(
        anthropic(s.token).messages.create({
          model: 'c',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'x' }],
        }),
        (e: any) => e.status === 400 && /mock provider error 400/.test(e.message),
      );
    } finally {
      mock.setBehaviour({ errorStatus: undefined });
    }
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await userUsage(s.userId)).daily!.requestsUsed, 0);
    await assertReservedAtMostALease(s.userId);
  });

  test('bare POST /api/remote/llm-proxy forwards to the stored base URL itself, metered', async () => {
    const bareTenant = await createTenant(app, admin);
    const r = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        provider: 'openai',
        key_name: 'full endpoint',
        api_key: REAL_KEYS.openai,
        base_url: `${mock.url}/v1/chat/completions`,
        tenant_id: bareTenant,
      },
    });
    assert.equal(r.status, 201);
    const s = await newSession('openai', { tenant: bareTenant });
    const res = await fetch(proxyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(res.status, 200);
    assert.equal(assertRealKeyOnly('openai', s.token).path, '/v1/chat/completions');
    await expectRecorded(s, expected('openai-chat'));
  });
});

describe('token refusals', () => {
  const refusal = async (headers: Record<string, string>, path = '/chat/completions') => {
    const r = await fetch(`${proxyUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'm', messages: [] }),
    });
    return { status: r.status, body: (await r.json()) as any };
  };

  test('missing, forged, expired, revoked, wrong-session and stopped-session tokens are refused', async () => {
    const before = mock.requests.length;
    const missing = await refusal({});
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.type, 'proxy_auth_error');

    const s = await newSession('openai');
    const [head, sig] = s.token.split('.');
    const tampered = `${head!.slice(0, -2)}${head!.endsWith('A') ? 'B' : 'A'}${head!.slice(-1)}.${sig}`;
    const otherSecret = signProxyToken(
      {
        jti: randomUUID(),
        sid: s.sessionId,
        uid: s.userId,
        tid: tenantId,
        prv: 'openai',
        iat: 1,
        exp: 4e9,
        typ: 'general',
      },
      'not-the-server-secret',
    );
    for (const forged of [tampered, otherSecret, 'svcpt_garbage', 'sk-not-a-proxy-token']) {
      const r = await refusal({ authorization: `Bearer ${forged}` });
      assert.equal(r.status, 401, forged);
      assert.equal(r.body.error.type, 'proxy_auth_error');
    }

    // Validly signed, but its jti's issuance record belongs to another session.
    const other = await newSession('openai');
    const record = (
      await app.database.db
        .select()
        .from(app.database.t.proxyTokens)
        .where(eq(app.database.t.proxyTokens.sessionId, other.sessionId))
    )[0]!;
    const crossed = signProxyToken(
      {
        jti: record.jti,
        sid: s.sessionId,
        uid: s.userId,
        tid: tenantId,
        prv: 'openai',
        iat: 1,
        exp: 4e9,
        typ: 'general',
      },
      proxyTokenSecret(app.settings),
    );
    issuedTokens.push(crossed);
    assert.equal((await refusal({ 'x-api-key': crossed })).status, 401);

    // The SDK sees an authentication error carrying our type.
    const revoked = await newSession('openai');
    await tokenService().revokeForSession(revoked.sessionId, 'stopped');
    await assert.rejects(chat(openai(revoked.token)), (e: any) => {
      assert.equal(e.status, 401);
      assert.equal(e.error?.type, 'proxy_auth_error');
      assert.match(e.message, /revoked/);
      return true;
    });

    const stopped = await newSession('anthropic');
    await app.database.db
      .update(app.database.t.agentSessions)
      .set({ status: 'stopped' })
      .where(eq(app.database.t.agentSessions.sessionId, stopped.sessionId));
    const st = await refusal({ 'x-api-key': stopped.token }, '/v1/messages');
    assert.equal(st.status, 401);
    assert.match(st.body.error.message, /no longer active/);

    const expiring = await newSession('gemini');
    app.clock.advance(4 * 60 * 60 * 1000 + 1000);
    try {
      const ex = await refusal({ 'x-goog-api-key': expiring.token }, '/v1beta/models/g:generateContent');
      assert.equal(ex.status, 401);
      assert.match(ex.body.error.message, /expired/);
    } finally {
      app.clock.advance(-(4 * 60 * 60 * 1000 + 1000));
    }

    assert.equal(mock.requests.length, before, 'no refused call reached the provider');
    const rows = await app.database.db
      .select()
      .from(app.database.t.auditLogs)
      .where(eq(app.database.t.auditLogs.action, 'REMOTE_LLM_PROXY_REFUSED'));
    const reasons = new Set(rows.map((r) => JSON.parse(r.details ?? '{}').reason));
    for (const reason of [
      'missing_token',
      'bad_signature',
      'malformed',
      'unknown',
      'revoked',
      'session_inactive',
      'expired',
    ])
      assert.ok(reasons.has(reason), `refusal ${reason} audited`);
    const auditText = JSON.stringify(rows);
    for (const token of issuedTokens) assert.ok(!auditText.includes(token), 'no token in the audit log');
    assert.ok(!auditText.includes('svcpt_'));
  });

  test('no stored key for the provider: config_error, no fallback to the environment', async () => {
    const bare = await createTenant(app, admin);
    process.env.OPENAI_API_KEY = 'sk-env-must-never-be-used';
    try {
      const s = await newSession('openai', { tenant: bare });
      const before = mock.requests.length;
      await assert.rejects(chat(openai(s.token)), (e: any) => {
        assert.equal(e.status, 400);
        assert.deepEqual(e.error, {
          message: 'No API key configured for provider openai',
          type: 'config_error',
        });
        return true;
      });
      assert.equal(mock.requests.length, before);
      await assertReservedAtMostALease(s.userId);
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });
});

describe('served ahead of Express', () => {
  test('refusals carry a request id, are audited with the client address, and are counted in /metrics', async () => {
    const r = await fetch(`${proxyUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'proxy-test-req-1' },
      body: '{}',
    });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('x-request-id'), 'proxy-test-req-1');
    const generated = await fetch(`${proxyUrl}/chat/completions`, { method: 'POST', body: '{}' });
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const [row] = await app.database.db
      .select()
      .from(app.database.t.auditLogs)
      .where(eq(app.database.t.auditLogs.requestId, 'proxy-test-req-1'));
    assert.equal(row!.action, 'REMOTE_LLM_PROXY_REFUSED');
    assert.match(row!.ipAddress ?? '', /127\.0\.0\.1/);
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    assert.match(
      metrics,
      /http_request_duration_seconds_count\{method="POST",route="\/api\/remote\/llm-proxy\/\*",status="401"\}/,
    );
  });

  test('the bare endpoint takes POST only; other routes still go through Express', async () => {
    const s = await newSession('openai');
    const get = await fetch(proxyUrl, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal(get.status, 405);
    assert.equal(((await get.json()) as any).error.type, 'proxy_error');
    const other = await fetch(`${app.url}/api/remote/llm-proxyish`);
    assert.equal(other.status, 404);
    assert.deepEqual(await other.json(), { error: 'Not found' });
    assert.equal((await fetch(`${app.url}/livez`)).status, 200);
  });
});

describe('quota', () => {
  test('a user request quota refuses with 429 and recovers the next day', async () => {
    const s = await newSession('openai', { quotas: { dailyRequestQuota: 2 } });
    const client = openai(s.token);
    await chat(client);
    await chat(client);
    await waitForUsage(s.userId, 2);
    await assert.rejects(chat(client), (e: any) => {
      assert.equal(e.status, 429);
      assert.equal(e.error?.type, 'quota_exceeded');
      assert.match(e.error?.message, /daily request quota/);
      assert.equal(e.headers?.get?.('x-should-retry') ?? e.headers?.['x-should-retry'], 'false');
      return true;
    });
    const now = app.clock.now();
    const toMidnight =
      Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();
    app.clock.advance(toMidnight + 1000);
    // The token was issued 4 h back at most; use a fresh one for the new day.
    const next = await newSession('openai', { userId: s.userId });
    const reply = await chat(openai(next.token));
    assert.ok(reply.choices.length > 0, 'the next day has a fresh daily quota');
    admin = await login(app.url, ADMIN.username, ADMIN.password); // the web session did not survive the jump
  });

  test('a monthly quota holds across days and recovers the next month', async () => {
    const s = await newSession('anthropic', { quotas: { monthlyRequestQuota: 1 } });
    const create = (token: string) =>
      anthropic(token).messages.create({
        model: 'c',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x' }],
      });
    await create(s.token);
    await waitForUsage(s.userId, 1);
    await assert.rejects(
      create(s.token),
      (e: any) => e.status === 429 && e.error?.error?.type === 'quota_exceeded',
    );
    const now = app.clock.now();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime();
    app.clock.advance(nextMonth + 1000);
    const s2 = await newSession('anthropic', { userId: s.userId });
    const msg = await create(s2.token);
    assert.equal(msg.usage.output_tokens, 8);
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  });

  test('user token quotas are in millions', async () => {
    const userId = await newUser({ quotas: { dailyTokenQuota: 1 } });
    const { db, t } = app.database;
    const now = app.clock.now();
    await db.insert(t.quotaUsage).values({ userId, date: dayKey(now), period: 'daily', tokensUsed: 999_990 });
    const s = await newSession('openai', { userId });
    await chat(openai(s.token)); // 999,990 < 1,000,000: room left; uses 18
    await waitForUsage(userId, 1);
    await assert.rejects(
      chat(openai(s.token)),
      (e: any) => e.status === 429 && /token quota/.test(e.error.message),
    );
  });

  test('tenant token limits are actual tokens and apply to all its users', async () => {
    const t2 = await createTenant(app, admin);
    await storeKeys(t2, ['openai']);
    const put = await api(app.url, 'PUT', `/api/tenants/${t2}/quota`, {
      auth: admin,
      body: { daily_token_limit: 30 },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const a = await newSession('openai', { tenant: t2 });
    const b = await newSession('openai', { tenant: t2 });
    await chat(openai(a.token)); // 18
    await waitForUsage(a.userId, 1);
    await chat(openai(b.token)); // 18 < 30 had room; now 36
    await waitForUsage(b.userId, 1);
    await assert.rejects(chat(openai(a.token)), (e: any) => {
      assert.equal(e.status, 429);
      assert.match(e.error.message, /tenant's daily token quota is exhausted \(36 of 30 used\)/);
      return true;
    });
  });

  test('concurrent requests at the limit: exactly the quota gets through', async () => {
    const s = await newSession('openai', { quotas: { dailyRequestQuota: 5 } });
    mock.setBehaviour({ responseDelayMs: 150 });
    let statuses: number[];
    try {
      statuses = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const r = await fetch(`${proxyUrl}/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
            body: JSON.stringify({ model: 'm', messages: [] }),
          });
          await r.arrayBuffer();
          return r.status;
        }),
      );
    } finally {
      mock.setBehaviour({ responseDelayMs: 0 });
    }
    assert.equal(statuses.filter((x) => x === 200).length, 5, `statuses ${statuses}`);
    assert.equal(statuses.filter((x) => x === 429).length, 7);
    const u = await waitForUsage(s.userId, 5);
    assert.equal(u.daily!.requestsUsed, 5);
    assert.equal(u.daily!.requestsReserved, 0);
    assert.equal(u.daily!.tokensUsed, 5 * 18);
  });

  test('concurrent requests of many users at a tenant request limit', async () => {
    const t3 = await createTenant(app, admin);
    await storeKeys(t3, ['openai']);
    await api(app.url, 'PUT', `/api/tenants/${t3}/quota`, { auth: admin, body: { daily_request_limit: 4 } });
    const sessions = await Promise.all(
      Array.from({ length: 10 }, () => newSession('openai', { tenant: t3 })),
    );
    mock.setBehaviour({ responseDelayMs: 100 });
    let statuses: number[];
    try {
      statuses = await Promise.all(
        sessions.map(async (s) => {
          const r = await fetch(`${proxyUrl}/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
            body: '{}',
          });
          await r.arrayBuffer();
          return r.status;
        }),
      );
    } finally {
      mock.setBehaviour({ responseDelayMs: 0 });
    }
    assert.equal(statuses.filter((x) => x === 200).length, 4, `statuses ${statuses}`);
    await new Promise((r) => setTimeout(r, 100));
    const { db, t } = app.database;
    const [day] = await db
      .select()
      .from(t.tenantUsage)
      .where(and(eq(t.tenantUsage.tenantId, t3), eq(t.tenantUsage.date, dayKey(app.clock.now()))));
    assert.equal(day!.requestsMade, 4);
    assert.equal(day!.requestsReserved, 0);
    assert.equal(day!.activeUsers, 10);
  });

  test('a failed quota check fails closed (503 quota_check_failed)', async () => {
    const s = await newSession('openai');
    const { sql } = app.database;
    await sql.query('ALTER TABLE tenant_usage RENAME TO tenant_usage_away');
    try {
      const r = await fetch(`${proxyUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
        body: '{}',
      });
      assert.equal(r.status, 503);
      assert.equal(((await r.json()) as any).error.type, 'quota_check_failed');
    } finally {
      await sql.query('ALTER TABLE tenant_usage_away RENAME TO tenant_usage');
    }
    const ok = await chat(openai(s.token));
    assert.ok(ok.choices.length > 0);
  });

  test('quota status and check endpoints read the same accounting', async () => {
    const r = await api(app.url, 'GET', '/api/quota/status', { auth: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.period, 'daily');
    assert.equal(r.body.user.request_limit, null);
    const c = await api(app.url, 'POST', '/api/quota/check', {
      auth: admin,
      body: { tokens: 10, requests: 1 },
    });
    assert.equal(c.status, 200);
    assert.equal(c.body.allowed, true);
  });
});

describe('client disconnect', () => {
  test('a caller leaving mid-stream aborts the upstream call; the partial response is counted', async () => {
    const s = await newSession('anthropic');
    mock.setBehaviour({ chunkDelayMs: 40, textChunks: 40 });
    const index = mock.requests.length;
    try {
      await new Promise<void>((resolve, reject) => {
        const req = http.request(`${proxyUrl}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': s.token },
        });
        req.on('response', (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => undefined);
        setTimeout(() => reject(new Error('no first chunk')), 5000);
        req.end(JSON.stringify({ model: 'c', max_tokens: 64, stream: true, messages: [] }));
      });
      const rec = await mock.waitForClosed(index, 5000);
      assert.equal(rec.aborted, true, 'the provider saw the connection go away');
      assert.ok(rec.chunksSent < 40, `only ${rec.chunksSent} of the chunks were generated`);
    } finally {
      mock.setBehaviour({ chunkDelayMs: 0, textChunks: 3 });
    }
    const u = await waitForUsage(s.userId, 1);
    assert.equal(u.daily!.requestsUsed, 1);
    assert.ok(u.daily!.tokensUsed > 0 && u.daily!.tokensUsed < 26, `partial usage ${u.daily!.tokensUsed}`);
  });
});

// POST /api/remote/usage-report: test/integration/usage-report-limits.test.ts (it needs a session started on
// a registered machine).

test('no secret in any log line', async () => {
  const text = app.logs.join('\n');
  assert.ok(app.logs.length > 50, 'logs were captured');
  for (const key of Object.values(REAL_KEYS))
    assert.ok(!text.includes(key), 'a real provider key was logged');
  for (const token of issuedTokens) assert.ok(!text.includes(token), 'a proxy token was logged');
  assert.ok(!text.includes('svcpt_'), 'something shaped like a proxy token was logged');
  for (const line of app.logs) assert.ok(!/gAAAAA[\w-]{20,}/.test(line), 'ciphertext was logged');
});
