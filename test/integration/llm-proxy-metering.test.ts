// Proxy metering on every call (issue 8, items 2 and 3), through the real API and database with the
// official `openai` SDK (and raw HTTP where a path must reach the server exactly as written) against
// the local mock provider:
// - the issue's attack paths are refused or metered, never 200 unmetered; malformed paths answer 400;
// - an exhausted quota refuses every allowed endpoint of every provider with 429;
// - embeddings tokens and request-only endpoints are counted;
// - a stream sent without include_usage is counted with real tokens and the caller gets exactly the
//   stream it asked for; a stream whose provider never reports usage is estimated and marked.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import type { KeyProvider } from '../../domain/key-providers.ts';
import { endpointTable } from '../../domain/proxy/endpoints.ts';
import { dayKey } from '../../domain/quota.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../services/quota.ts';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;
let mock: MockProvider;
let tenantId: number;
let proxyUrl: string;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  mock = await startMockProvider();
  proxyUrl = `${app.url}/api/remote/llm-proxy`;
  tenantId = await createTenant(app, admin);
  for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
    const r = await api(app.url, 'POST', '/api/remote/api-keys', {
      auth: admin,
      body: {
        provider,
        key_name: `${provider} metering key`,
        api_key: `real-${provider}-key-0123456789`,
        base_url: provider === 'openai' ? `${mock.url}/v1` : mock.url,
        tenant_id: tenantId,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
});
after(async () => {
  await mock?.close();
  await app?.close();
});

interface TestSession {
  sessionId: string;
  userId: number;
  token: string;
}

/** A user (optionally with no request left today), a remote session and its proxy token. */
async function newSession(provider: KeyProvider, overQuota = false): Promise<TestSession> {
  const { db, t } = app.database;
  const [user] = await db
    .insert(t.users)
    .values({
      username: `metering-${randomUUID().slice(0, 8)}`,
      passwordHash: 'not-a-login',
      role: 'user',
      tenantId,
      dailyRequestQuota: overQuota ? 0 : null,
    })
    .returning({ id: t.users.id });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId,
    toolName: 'cli_alpha',
    hostName: 'machine-metering-test',
    userId: user!.id,
    status: 'active',
    workspaceType: 'remote',
    remoteMachineId: 'machine-metering-test',
  });
  const tokens = proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });
  const { token } = await tokens.issue({ sessionId, userId: user!.id, tenantId, provider });
  return { sessionId, userId: user!.id, token };
}

const openai = (token: string) => new OpenAI({ apiKey: token, baseURL: proxyUrl, maxRetries: 0 });

/** One call with the path sent byte for byte (fetch would resolve dot segments and re-encode). */
function rawCall(
  method: string,
  path: string,
  token: string,
  body = '{"model":"m","input":"x","messages":[]}',
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.url}/`, {
      method,
      path: `/api/remote/llm-proxy${path}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    req.on('response', async (res) => {
      let text = '';
      for await (const chunk of res) text += chunk;
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      resolve({ status: res.statusCode!, body: parsed });
    });
    req.on('error', reject);
    req.end(method === 'GET' ? undefined : body);
  });
}

async function todaysUsage(userId: number) {
  const { db, t } = app.database;
  const rows = await db.select().from(t.quotaUsage).where(eq(t.quotaUsage.userId, userId));
  return rows.find((r) => r.period === 'daily' && r.date === dayKey(app.clock.now()));
}

/** Settles land just after the response: wait until `requests` are used and nothing is reserved. */
async function settled(userId: number, requests: number) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const u = await todaysUsage(userId);
    if (u && u.requestsUsed >= requests && u.requestsReserved === 0) return u;
    if (Date.now() > deadline) throw new Error(`user ${userId} never reached ${requests} requests`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const proxyError = (status: number, message: string) => ({
  status,
  body: { error: { message, type: 'proxy_error' } },
});

describe('every call is refused or metered', () => {
  test("the issue's attack paths: over quota none reaches the provider; within quota each is counted", async () => {
    const over = await newSession('openai', true);
    const before = mock.requests.length;
    const quota = async (path: string) => {
      const r = await rawCall('POST', path, over.token);
      assert.equal(r.status, 429, path);
      assert.equal(r.body.error.type, 'quota_exceeded', path);
    };
    await quota('/v1/embeddings');
    await quota('/v1/chat/completion%73');
    const notAllowed = proxyError(
      404,
      'The proxy does not forward this endpoint (see the list of allowed endpoints in the README)',
    );
    const batches = proxyError(
      403,
      'Batch and file endpoints are not available through the proxy: their usage is only known long after the call, so it cannot be checked against the quota',
    );
    assert.deepEqual(await rawCall('POST', '/v1/batches', over.token), batches);
    assert.deepEqual(await rawCall('GET', '/v1/batches/batch_1', over.token), batches);
    assert.deepEqual(await rawCall('POST', '/v1/files', over.token), batches);
    assert.deepEqual(await rawCall('POST', '/v1/images/generations', over.token), notAllowed);
    assert.deepEqual(await rawCall('POST', '/v1/chat/Completions', over.token), notAllowed);
    assert.deepEqual(await rawCall('POST', '/v1/audio/speech', over.token), notAllowed);
    assert.equal(mock.requests.length, before, 'nothing reached the provider');

    // Within quota: the encoded path is forwarded as the endpoint it decodes to, and metered as such.
    const s = await newSession('openai');
    const r = await rawCall(
      'POST',
      '/v1/chat/completion%73',
      s.token,
      '{"model":"m","messages":[{"role":"user","content":"x"}]}',
    );
    assert.equal(r.status, 200);
    assert.equal(mock.requests.at(-1)!.path, '/v1/chat/completions');
    const u = await settled(s.userId, 1);
    assert.equal(u.tokensUsed, MOCK_USAGE.openaiChat.total_tokens);
  });

  test('malformed paths answer 400 proxy_error and never reach the provider', async () => {
    const s = await newSession('openai');
    const before = mock.requests.length;
    const cases: Record<string, string> = {
      '/v1/chat%2Fcompletions': 'Path must not contain encoded "/", "?" or "%"',
      '/v1/x/..%2Fchat/completions': 'Path must not contain encoded "/", "?" or "%"',
      '/v1/x/../chat/completions': 'Path must not contain dot segments',
      '/v1/./chat/completions': 'Path must not contain dot segments',
      '/v1/%2e%2e/v1/chat/completions': 'Path must not contain dot segments',
      '/v1\\chat\\completions': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat%5Ccompletions': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat/completions;.css': 'Path must not contain "\\", ";" or "#"',
      '/v1/chat/completions%23x': 'Path must not contain "\\", ";" or "#"',
      '/v1//chat/completions': 'Path must not contain empty segments ("//" or a trailing "/")',
      '/v1/chat/completions/': 'Path must not contain empty segments ("//" or a trailing "/")',
    };
    for (const [path, message] of Object.entries(cases)) {
      assert.deepEqual(await rawCall('POST', path, s.token), proxyError(400, message), path);
    }
    assert.equal(mock.requests.length, before);
    assert.equal((await todaysUsage(s.userId))?.requestsReserved ?? 0, 0);
  });

  test('over quota, every allowed endpoint of every provider answers 429 (and the bare endpoint too)', async () => {
    const before = mock.requests.length;
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
      const s = await newSession(provider, true);
      const rules = endpointTable(provider).filter((r) => r.metering.kind !== 'refused');
      assert.ok(rules.length >= 4);
      for (const rule of rules) {
        for (const version of ['', `/${rule.versions[0]}`]) {
          const path = `${version}${rule.pattern.replace('{model}', 'model-1')}`;
          const r = await rawCall(rule.method, path, s.token);
          assert.equal(r.status, 429, `${provider} ${rule.method} ${path}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error.type, 'quota_exceeded');
        }
      }
    }
    const bare = await newSession('openai', true);
    const r = await fetch(proxyUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${bare.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    // Bare on a base URL that names no endpoint: not forwarded at all.
    assert.equal(r.status, 404);
    assert.equal(mock.requests.length, before, 'nothing reached the provider');
  });

  test('embeddings tokens are counted; request-only endpoints count one request', async () => {
    const s = await newSession('openai');
    const e = await openai(s.token).embeddings.create({ model: 'text-embedding-test', input: 'hello' });
    assert.equal(e.data.length, 1);
    assert.deepEqual(e.usage, MOCK_USAGE.openaiEmbeddings);
    const u = await settled(s.userId, 1);
    assert.equal(u.requestsUsed, 1);
    assert.equal(u.tokensUsed, MOCK_USAGE.openaiEmbeddings.total_tokens);

    const a = await newSession('anthropic');
    const counted = await rawCall('POST', '/v1/messages/count_tokens', a.token);
    assert.deepEqual(counted, { status: 200, body: MOCK_USAGE.anthropicCountTokens });
    const g = await newSession('gemini');
    assert.equal((await rawCall('POST', '/v1beta/models/gemini-test:countTokens', g.token)).status, 200);
    assert.equal((await rawCall('POST', '/v1beta/models/gemini-test:embedContent', g.token)).status, 200);
    for (const [who, requests] of [
      [a, 1],
      [g, 2],
    ] as const) {
      const usage = await settled(who.userId, requests);
      assert.equal(usage.requestsUsed, requests);
      assert.equal(usage.tokensUsed, 0);
    }
  });
});

describe('streams without usage', () => {
  const body = (extra: Record<string, unknown>) =>
    JSON.stringify({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      ...extra,
    });

  test('a stream sent without include_usage is counted with real tokens; the caller gets no extra chunk', async () => {
    const s = await newSession('openai');
    const stream = await openai(s.token).chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const chunks: unknown[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.length, 5, 'role, three text deltas, finish: no usage chunk');
    for (const c of chunks) assert.ok(!('usage' in (c as object)), 'no usage member was added');
    const upstream = JSON.parse(mock.requests.at(-1)!.body);
    assert.deepEqual(upstream.stream_options, { include_usage: true }, 'the proxy asked for usage');
    const u = await settled(s.userId, 1);
    assert.equal(u.tokensUsed, MOCK_USAGE.openaiChat.total_tokens);

    // Byte for byte what the provider sends to a caller that does not ask for usage.
    const direct = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', body: body({}) });
    const s2 = await newSession('openai');
    const proxied = await fetch(`${proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s2.token}`, 'content-type': 'application/json' },
      body: body({}),
    });
    assert.equal(proxied.headers.get('content-type'), direct.headers.get('content-type'));
    assert.equal(await proxied.text(), await direct.text());
    assert.equal((await settled(s2.userId, 1)).tokensUsed, MOCK_USAGE.openaiChat.total_tokens);

    // A caller that asks for usage gets the usage chunk, untouched.
    const s3 = await newSession('openai');
    const asked = await fetch(`${proxyUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s3.token}`, 'content-type': 'application/json' },
      body: body({ stream_options: { include_usage: true } }),
    });
    const text = await asked.text();
    assert.equal(text.split('"usage":{').length, 2, 'exactly one usage chunk');
    assert.equal(text.split('"usage":null').length, 6, 'usage: null on the five other chunks');
  });

  test('a stream whose provider never reports usage is estimated (ceil(chars / 4)) and marked', async () => {
    mock.setBehaviour({ streamsWithoutUsage: true });
    try {
      const s = await newSession('openai');
      const stream = await openai(s.token).chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      assert.equal(text, 'tok0 tok1 tok2 ');
      // Prompt string values 'gpt-test' + 'user' + 'hi' = 14 chars -> 4; output 15 chars -> 4.
      const u = await settled(s.userId, 1);
      assert.equal(u.tokensUsed, 8);

      const g = await newSession('gemini');
      const r = await fetch(`${proxyUrl}/v1beta/models/gemini-test:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'x-goog-api-key': g.token, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] }),
      });
      assert.equal(r.status, 200);
      assert.doesNotMatch(await r.text(), /usageMetadata/);
      // Prompt 'user' + 'hello there' = 15 chars -> 4; output 15 chars -> 4.
      assert.equal((await settled(g.userId, 1)).tokensUsed, 8);

      for (const who of [s, g]) {
        const line = app.logs.find((l) => l.includes(who.sessionId) && l.includes('tokens estimated'));
        assert.ok(line, 'the estimate is logged');
        const entry = JSON.parse(line);
        assert.equal(entry.estimated, true);
        assert.equal(entry.tokens, 8);
      }
      // The record says so too: daily_usage keeps how many of its tokens were estimated.
      await quotaServiceFor(app.deps).flush();
      const rows = await app.database.sql.query<{ tokens_used: number; estimated_tokens: number }>(
        'SELECT tokens_used, estimated_tokens FROM daily_usage WHERE tenant_id = ? AND tool_name = ?',
        [tenantId, 'cli_alpha'],
      );
      assert.equal(rows.length, 1);
      assert.equal(Number(rows[0]!.estimated_tokens), 16, 'both estimated calls are marked');
      assert.ok(Number(rows[0]!.tokens_used) > Number(rows[0]!.estimated_tokens), 'reported tokens are not');
    } finally {
      mock.setBehaviour({ streamsWithoutUsage: false });
    }
  });
});
