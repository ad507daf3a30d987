// Personal gateway keys (issue 29 item 1), on the real API, database and model proxy (against the mock
// provider): a key is shown once and stored as its hash only; listing, revocation and their tenant and
// role rules (another user's or tenant's key answers 404, a read-only user may not create one); audit
// rows never hold the key; the proxy takes a key in every header form the official clients use, with
// its owner's and tenant's quota, the key's own limits, the content filter, expiry, a disabled owner
// and a suspended tenant; an answered call is one `gateway` assistant row, counted once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { hashGatewayKey } from '../../domain/gateway-keys.ts';
import { dayKey } from '../../domain/quota.ts';
import { quotaServiceFor } from '../../services/quota.ts';
import { remoteMessagesFor } from '../../services/usage/remote-messages.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant, createUser, PASSWORD } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;
let mock: MockProvider;
let proxyUrl: string;
let tenantA: number;
let tenantB: number;
type Who = { id: number; username: string; session: Session };
const people: Record<'u' | 'w' | 'ro' | 'adminA' | 'adminB' | 'v', Who> = {} as never;
/** Every raw key a test saw: none may appear in a log line or an audit row. */
const rawKeys: string[] = [];

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  mock = await startMockProvider();
  proxyUrl = `${app.url}/api/remote/llm-proxy`;
  tenantA = await createTenant(app, admin);
  tenantB = await createTenant(app, admin);
  await storeKeys(tenantA);
  await storeKeys(tenantB);
  const specs = [
    ['u', 'user', tenantA],
    ['w', 'user', tenantA],
    ['ro', 'readonly', tenantA],
    ['adminA', 'tenant_admin', tenantA],
    ['adminB', 'tenant_admin', tenantB],
    ['v', 'user', tenantB],
  ] as const;
  for (const [k, role, tenant] of specs) {
    const u = await createUser(app, admin, { role, tenant_id: tenant });
    people[k] = { ...u, session: await login(app.url, u.username, PASSWORD) };
  }
});
after(async () => {
  await mock?.close();
  await app?.close();
});

async function storeKeys(tenant: number) {
  for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
    const r = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        provider,
        key_name: `${provider} key`,
        api_key: `real-${provider}-key-${tenant}-0123456789`,
        base_url: provider === 'openai' ? `${mock.url}/v1` : mock.url,
        tenant_id: tenant,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
}

async function newKey(who: Who, body: Record<string, unknown> = {}) {
  const r = await api(app.url, 'POST', '/api/gateway-keys', {
    auth: who.session,
    body: { name: `laptop-${randomUUID().slice(0, 6)}`, provider: 'openai', ...body },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  rawKeys.push(r.body.key);
  return r.body as { id: number; key: string; name: string; key_prefix: string };
}

/** One OpenAI chat call through the proxy with the key in `Authorization: Bearer` (or given headers). */
function chat(key: string, opts: { headers?: Record<string, string>; text?: string } = {}) {
  return fetch(`${proxyUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'codex_cli_rs/0.50.0',
      ...(opts.headers ?? { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: opts.text ?? 'hi' }] }),
  });
}

async function gatewayRows(userId: number) {
  await quotaServiceFor(app.deps).flush();
  await remoteMessagesFor(app.deps).flush();
  return app.database.sql.query<Record<string, unknown>>(
    "SELECT * FROM daily_messages WHERE user_id = ? AND message_source = 'gateway' ORDER BY id",
    [userId],
  );
}

async function usedRequests(userId: number): Promise<number> {
  await quotaServiceFor(app.deps).flush();
  const [row] = await app.database.sql.query<{ n: unknown }>(
    "SELECT requests_used AS n FROM quota_usage WHERE user_id = ? AND period = 'daily' AND date = ?",
    [userId, dayKey(app.clock.now())],
  );
  return Number(row?.n ?? 0);
}

test('a key is shown once, stored as its SHA-256 only, listed with its prefix', async () => {
  const made = await newKey(people.u, { name: 'my laptop', provider: 'anthropic', daily_request_limit: 50 });
  assert.match(made.key, /^svcgk_[A-Za-z0-9_-]{43}$/);
  assert.equal(made.key_prefix, made.key.slice(0, 12));
  const [row] = await app.database.sql.query<Record<string, unknown>>(
    'SELECT * FROM gateway_keys WHERE id = ?',
    [made.id],
  );
  assert.equal(row!.key_hash, hashGatewayKey(made.key));
  assert.ok(!JSON.stringify(row).includes(made.key.slice(12)), 'the key itself is not stored');
  const listed = await api(app.url, 'GET', '/api/gateway-keys', { auth: people.u.session });
  assert.equal(listed.status, 200);
  const mine = listed.body.keys.find((k: { id: number }) => k.id === made.id);
  assert.equal(mine.name, 'my laptop');
  assert.equal(mine.provider, 'anthropic');
  assert.equal(mine.daily_request_limit, 50);
  assert.equal(mine.key, undefined);
  assert.ok(!JSON.stringify(listed.body).includes(made.key));
  const audit = await app.database.sql.query<{ details: unknown }>(
    "SELECT details FROM audit_logs WHERE action = 'GATEWAY_KEY_CREATE' AND resource_id = ?",
    [String(made.id)],
  );
  assert.equal(audit.length, 1);
  assert.ok(!JSON.stringify(audit).includes(made.key.slice(12)));
});

test('validation, read-only users, and other users and tenants', async () => {
  const bad = await api(app.url, 'POST', '/api/gateway-keys', {
    auth: people.u.session,
    body: { name: 'x', provider: 'mistral' },
  });
  assert.equal(bad.status, 400);
  const past = await api(app.url, 'POST', '/api/gateway-keys', {
    auth: people.u.session,
    body: { name: 'x', provider: 'openai', expires_at: '2001-01-01T00:00:00Z' },
  });
  assert.equal(past.status, 400);
  const ro = await api(app.url, 'POST', '/api/gateway-keys', {
    auth: people.ro.session,
    body: { name: 'x', provider: 'openai' },
  });
  assert.equal(ro.status, 403);

  const k = await newKey(people.u);
  // Another user of the same tenant, and another tenant's administrator: 404, the key still works.
  for (const who of [people.w, people.adminB, people.v]) {
    const r = await api(app.url, 'DELETE', `/api/gateway-keys/${k.id}`, { auth: who.session });
    assert.equal(r.status, 404, who.username);
  }
  assert.equal((await chat(k.key)).status, 200);
  const ownList = await api(app.url, 'GET', '/api/gateway-keys', { auth: people.w.session });
  assert.ok(!ownList.body.keys.some((x: { id: number }) => x.id === k.id));
  assert.equal(
    (await api(app.url, 'GET', '/api/gateway-keys?scope=tenant', { auth: people.w.session })).status,
    403,
  );
  const tenantB = await api(app.url, 'GET', '/api/gateway-keys?scope=tenant', {
    auth: people.adminB.session,
  });
  assert.ok(!tenantB.body.keys.some((x: { id: number }) => x.id === k.id));
  const tenantA = await api(app.url, 'GET', '/api/gateway-keys?scope=tenant', {
    auth: people.adminA.session,
  });
  const seen = tenantA.body.keys.find((x: { id: number }) => x.id === k.id);
  assert.ok(seen?.last_used_at, 'the tenant admin sees it, with its last use');

  // The tenant's administrator revokes it: 204, audited without the key, refused by the proxy at once.
  const del = await api(app.url, 'DELETE', `/api/gateway-keys/${k.id}`, { auth: people.adminA.session });
  assert.equal(del.status, 204);
  const refused = await chat(k.key);
  assert.equal(refused.status, 401);
  assert.deepEqual(((await refused.json()) as any).error, {
    message: 'Gateway key revoked',
    type: 'proxy_auth_error',
  });
  const audit = await app.database.sql.query<Record<string, unknown>>(
    "SELECT * FROM audit_logs WHERE action IN ('GATEWAY_KEY_REVOKE', 'REMOTE_LLM_PROXY_REFUSED') AND resource_id = ?",
    [String(k.id)],
  );
  assert.ok(audit.some((a) => a.action === 'GATEWAY_KEY_REVOKE' && a.success));
  const refusedAudit = await app.database.sql.query<Record<string, unknown>>(
    "SELECT * FROM audit_logs WHERE action = 'REMOTE_LLM_PROXY_REFUSED' AND resource_type = 'gateway_key'",
  );
  assert.ok(refusedAudit.length >= 1);
  assert.ok(!JSON.stringify([audit, refusedAudit]).includes(k.key.slice(12)));
});

test('the proxy takes a key in every header form; one gateway row per answered call', async () => {
  const openaiKey = await newKey(people.w, { name: 'codex box', provider: 'openai' });
  const before = await usedRequests(people.w.id);
  // The official client (Authorization: Bearer), then x-api-key.
  const client = new OpenAI({ apiKey: openaiKey.key, baseURL: proxyUrl, maxRetries: 0 });
  const done = await client.chat.completions.create({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(done.usage?.total_tokens, 18);
  assert.equal((await chat('', { headers: { 'x-api-key': openaiKey.key } })).status, 200);
  const rec = mock.requests.at(-1)!;
  assert.ok(!JSON.stringify(rec).includes(openaiKey.key), 'the gateway key never reaches the provider');

  const gemini = await newKey(people.w, { name: 'gemini box', provider: 'gemini' });
  const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  const g1 = await fetch(`${proxyUrl}/v1beta/models/gemini-test:generateContent`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-goog-api-key': gemini.key,
      'user-agent': 'GeminiCLI/0.9.0',
    },
    body,
  });
  assert.equal(g1.status, 200);
  const g2 = await fetch(`${proxyUrl}/v1beta/models/gemini-test:generateContent?key=${gemini.key}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  assert.equal(g2.status, 200);
  // A key is bound to its provider: the OpenAI endpoint with the Gemini key is not on its allow-list.
  assert.equal((await chat(gemini.key)).status, 404);

  assert.equal(await usedRequests(people.w.id), before + 4);
  const rows = await gatewayRows(people.w.id);
  assert.equal(rows.length, 4, 'one row per answered call, counted once');
  const codexRows = rows.filter((r) => r.host_name === 'gateway:codex box');
  assert.equal(codexRows.length, 2);
  assert.equal(rows.filter((r) => r.tool_name === 'gemini-cli').length, 1);
  assert.equal(rows.filter((r) => r.tool_name === 'gateway').length, 2, 'the openai SDK and a bare fetch');
  for (const r of rows) {
    assert.equal(r.role, 'assistant');
    assert.equal(r.agent_session_id, null);
    assert.equal(Number(r.tenant_id), tenantA);
  }
  assert.equal(Number(codexRows[0]!.input_tokens), 11);
  assert.equal(Number(codexRows[0]!.output_tokens), 7);
  assert.ok(!app.logs.some((l) => rawKeys.some((k) => l.includes(k))), 'no key in any log line');
});

test('refusals: unknown, expired, disabled owner, suspended tenant', async () => {
  const unknown = await chat(`svcgk_${'A'.repeat(43)}`);
  assert.equal(unknown.status, 401);
  assert.equal(((await unknown.json()) as any).error.type, 'proxy_auth_error');

  const soon = new Date(app.clock.now().getTime() + 60_000).toISOString();
  const expiring = await newKey(people.w, { expires_at: soon });
  assert.equal((await chat(expiring.key)).status, 200);
  app.clock.advance(61_000);
  try {
    const expired = await chat(expiring.key);
    assert.equal(expired.status, 401);
    assert.equal(((await expired.json()) as any).error.message, 'Gateway key expired');
  } finally {
    app.clock.advance(-61_000);
  }

  const owner = await createUser(app, admin, { role: 'user', tenant_id: tenantB });
  const ownerSession = await login(app.url, owner.username, PASSWORD);
  const k = await newKey({ ...owner, session: ownerSession });
  assert.equal((await chat(k.key)).status, 200);
  const off = await api(app.url, 'PUT', `/api/admin/users/${owner.id}`, {
    auth: admin,
    body: { is_active: false },
  });
  assert.equal(off.status, 200, JSON.stringify(off.body));
  const disabled = await chat(k.key);
  assert.equal(disabled.status, 403);
  assert.match(((await disabled.json()) as any).error.message, /disabled/);
  await api(app.url, 'PUT', `/api/admin/users/${owner.id}`, { auth: admin, body: { is_active: true } });
  assert.equal((await chat(k.key)).status, 200);

  const t3 = await createTenant(app, admin);
  await storeKeys(t3);
  const t3user = await createUser(app, admin, { role: 'user', tenant_id: t3 });
  const k3 = await newKey({ ...t3user, session: await login(app.url, t3user.username, PASSWORD) });
  assert.equal((await chat(k3.key)).status, 200);
  assert.equal((await api(app.url, 'POST', `/api/tenants/${t3}/suspend`, { auth: admin })).status, 200);
  const suspended = await chat(k3.key);
  assert.equal(suspended.status, 403);
  assert.match(((await suspended.json()) as any).error.message, /tenant/);
});

test('quotas: the user, the tenant and the key limits refuse with 429 quota_exceeded', async () => {
  // The key's own daily request limit (2): the third call is refused naming the key's limit.
  const limited = await newKey(people.u, { daily_request_limit: 2 });
  assert.equal((await chat(limited.key)).status, 200);
  assert.equal((await chat(limited.key)).status, 200);
  const third = await chat(limited.key);
  assert.equal(third.status, 429);
  const err = ((await third.json()) as any).error;
  assert.equal(err.type, 'quota_exceeded');
  assert.match(err.message, /gateway key's daily request limit is reached \(2 of 2 used\)/);
  // Another key of the same user is not limited by it.
  assert.equal((await chat((await newKey(people.u)).key)).status, 200);

  // The key's daily token limit (18 tokens per call: the first passes, the next is refused).
  const tokens = await newKey(people.u, { daily_token_limit: 10 });
  assert.equal((await chat(tokens.key)).status, 200);
  const overTokens = await chat(tokens.key);
  assert.equal(overTokens.status, 429);
  assert.match(((await overTokens.json()) as any).error.message, /daily token limit/);

  // The user's own quota applies to the key.
  const q = await createUser(app, admin, { role: 'user', tenant_id: tenantB });
  const qSession = await login(app.url, q.username, PASSWORD);
  const qKey = await newKey({ ...q, session: qSession });
  const put = await api(app.url, 'PUT', `/api/admin/users/${q.id}/quota`, {
    auth: admin,
    body: { daily_request_quota: 1 },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal((await chat(qKey.key)).status, 200);
  const overUser = await chat(qKey.key);
  assert.equal(overUser.status, 429);
  assert.match(((await overUser.json()) as any).error.message, /^Your daily request quota/);

  // The tenant's quota applies to the key.
  const t4 = await createTenant(app, admin);
  await storeKeys(t4);
  const quota = await api(app.url, 'PUT', `/api/tenants/${t4}/quota`, {
    auth: admin,
    body: { daily_request_limit: 1 },
  });
  assert.equal(quota.status, 200, JSON.stringify(quota.body));
  const t4user = await createUser(app, admin, { role: 'user', tenant_id: t4 });
  const t4Key = await newKey({ ...t4user, session: await login(app.url, t4user.username, PASSWORD) });
  assert.equal((await chat(t4Key.key)).status, 200);
  const overTenant = await chat(t4Key.key);
  assert.equal(overTenant.status, 429);
  assert.match(((await overTenant.json()) as any).error.message, /^Your tenant's daily request quota/);
});

test('the content filter refuses a blocked prompt before the provider', async () => {
  const word = `gwblk-${randomUUID().slice(0, 6)}z`;
  const rule = await api(app.url, 'POST', '/api/filter-rules', {
    auth: people.adminA.session,
    body: { pattern: word, action: 'block' },
  });
  assert.equal(rule.status, 201, JSON.stringify(rule.body));
  const k = await newKey(people.u);
  const seen = mock.requests.length;
  const blocked = await chat(k.key, { text: `please ${word} now` });
  assert.equal(blocked.status, 403);
  assert.equal(((await blocked.json()) as any).error.type, 'content_filtered');
  assert.equal(mock.requests.length, seen, 'nothing reached the provider');
  assert.equal((await chat(k.key, { text: 'a clean prompt' })).status, 200);
});
