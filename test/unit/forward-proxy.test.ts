/**
 * forwardToProvider against the mock provider, with real clients (the official SDKs, fetch and raw
 * node:http where timing matters). A tiny test server routes /<provider>/<path> to the forwarder.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { type ForwardResult, forwardToProvider } from '../../api/llm-proxy/forward.ts';
import { providerAuthHeaders } from '../../api/llm-proxy/provider-auth.ts';
import { KEY_PROVIDERS, type KeyProvider } from '../../domain/key-providers.ts';
import { MOCK_EXPECTED_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';

const PROXY_TOKEN = 'svcpt_caller-token-never-forwarded';
const REAL_KEYS = { openai: 'sk-real-openai', anthropic: 'sk-ant-real', gemini: 'AIza-real-gemini' } as const;

interface TestProxy {
  url: string;
  results: ForwardResult[];
  /** Resolves with the n-th onDone result (0-based). */
  result(index: number): Promise<ForwardResult>;
  close(): Promise<void>;
}

interface ProxyOptions {
  upstreamBase?: (provider: string) => string;
  idleTimeoutMs?: number;
  signal?: AbortSignal;
  /** Read the request body before forwarding (what a body parser mounted in front would do). */
  consumeBody?: boolean;
}

async function startTestProxy(
  mock: MockProvider | { url: string },
  options: ProxyOptions = {},
): Promise<TestProxy> {
  const results: ForwardResult[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer(async (req, res) => {
    const match = /^\/([a-z]+)(\/.*)$/.exec(req.url ?? '');
    if (!match || !(KEY_PROVIDERS as readonly string[]).includes(match[1])) {
      res.writeHead(404).end();
      return;
    }
    const provider = match[1] as KeyProvider;
    if (options.consumeBody) for await (const _chunk of req);
    forwardToProvider({
      req,
      res,
      provider,
      path: match[2],
      upstreamBase: options.upstreamBase?.(provider) ?? (provider === 'openai' ? `${mock.url}/v1` : mock.url),
      providerAuth: providerAuthHeaders(provider, REAL_KEYS[provider]),
      idleTimeoutMs: options.idleTimeoutMs,
      signal: options.signal,
      onDone: (result) => {
        results.push(result);
        for (const wake of waiters.splice(0)) wake();
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    results,
    async result(index) {
      const deadline = Date.now() + 5000;
      while (results[index] === undefined) {
        if (Date.now() > deadline) throw new Error(`no onDone result ${index}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return results[index];
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Every header value the provider saw, to prove the caller's token never reached it. */
function allHeaderValues(mock: MockProvider): string {
  return JSON.stringify(mock.requests.map((r) => [r.headers, r.path]));
}

/**
 * POSTs with node:http and resolves when the response head arrives, so timing can be observed.
 * The path is sent exactly as given (no URL normalisation).
 */
function rawPost(
  base: string,
  path: string,
  body: unknown,
): Promise<{ req: http.ClientRequest; res: http.IncomingMessage }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      hostname,
      port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${PROXY_TOKEN}` },
    });
    req.on('response', (res) => resolve({ req, res }));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function readAll(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
    });
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

describe('forwardToProvider with the official SDKs', () => {
  let mock: MockProvider;
  let proxy: TestProxy;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    mock = await startMockProvider({ textChunks: 3 });
    proxy = await startTestProxy(mock);
    openai = new OpenAI({ apiKey: PROXY_TOKEN, baseURL: `${proxy.url}/openai`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: PROXY_TOKEN, baseURL: `${proxy.url}/anthropic`, maxRetries: 0 });
  });
  after(async () => {
    await proxy.close();
    await mock.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    proxy.results.length = 0;
  });
  afterEach(() => {
    // The provider must never see the caller's proxy token, whatever header or query it came in.
    assert.ok(!allHeaderValues(mock).includes(PROXY_TOKEN), 'proxy token leaked to the provider');
  });

  it('openai chat: replaces the caller token with the real key and reports usage', async () => {
    const completion = await openai.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(completion.choices[0].message.content, 'tok0 tok1 tok2 ');
    assert.equal(mock.requests[0].headers.authorization, `Bearer ${REAL_KEYS.openai}`);
    assert.equal(mock.requests[0].path, '/v1/chat/completions');
    assert.equal(mock.requests[0].headers['accept-encoding'], 'identity');
    const result = await proxy.result(0);
    assert.deepEqual(result, {
      status: 200,
      usage: { ...MOCK_EXPECTED_USAGE['openai-chat'], model: 'gpt-x' },
      usagePartial: false,
      wireFormat: 'openai-chat',
      aborted: false,
      bytes: result.bytes,
    });
    assert.ok(result.bytes > 100);
  });

  it('openai chat stream with include_usage: usage from the final chunk', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'tok0 tok1 tok2 ');
    const result = await proxy.result(0);
    assert.deepEqual(result.usage, { ...MOCK_EXPECTED_USAGE['openai-chat'], model: 'gpt-x' });
  });

  it('openai chat stream without usage: estimated from the text, ceil(chars / 4), and marked', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    for await (const _chunk of stream);
    const result = await proxy.result(0);
    // Prompt: 'gpt-x' + 'user' + 'hi' = 11 chars -> 3; output: 'tok0 tok1 tok2 ' = 15 chars -> 4.
    assert.deepEqual(result.usage, {
      inputTokens: 3,
      outputTokens: 4,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalTokens: 7,
      estimated: true,
    });
  });

  it('openai responses, streamed and not: usage for both', async () => {
    await openai.responses.create({ model: 'gpt-r', input: 'hi' });
    for await (const _event of await openai.responses.create({ model: 'gpt-r', input: 'hi', stream: true }));
    const expected = { ...MOCK_EXPECTED_USAGE['openai-responses'], model: 'gpt-r' };
    assert.deepEqual((await proxy.result(0)).usage, expected);
    assert.deepEqual((await proxy.result(1)).usage, expected);
  });

  it('openai base URL given with /v1 by the client too: same upstream path', async () => {
    const client = new OpenAI({ apiKey: PROXY_TOKEN, baseURL: `${proxy.url}/openai/v1`, maxRetries: 0 });
    const models = await client.models.list();
    assert.equal(models.data[0].id, 'mock-model');
    assert.equal(mock.requests[0].path, '/v1/models');
    const result = await proxy.result(0);
    assert.equal(result.wireFormat, null);
    assert.equal(result.usage, null);
    assert.equal(result.usageError, 'endpoint reports no usage');
  });

  it('anthropic messages, streamed and not: real x-api-key, usage with cache tokens', async () => {
    await anthropic.messages.create({
      model: 'claude-x',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const final = await anthropic.messages
      .stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    assert.equal(final.usage.output_tokens, 8);
    for (const request of mock.requests) {
      assert.equal(request.headers['x-api-key'], REAL_KEYS.anthropic);
      assert.equal(request.headers.authorization, undefined);
    }
    const expected = { ...MOCK_EXPECTED_USAGE['anthropic-messages'], model: 'claude-x' };
    assert.deepEqual((await proxy.result(0)).usage, expected);
    assert.deepEqual((await proxy.result(1)).usage, expected);
    assert.equal((await proxy.result(1)).usagePartial, false);
  });
});

describe('forwardToProvider: Gemini with fetch', () => {
  let mock: MockProvider;
  let proxy: TestProxy;

  before(async () => {
    mock = await startMockProvider({ textChunks: 3 });
    proxy = await startTestProxy(mock);
  });
  after(async () => {
    await proxy.close();
    await mock.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    proxy.results.length = 0;
  });

  const call = (method: string, query = '') =>
    fetch(`${proxy.url}/gemini/v1beta/models/gemini-x:${method}?key=${PROXY_TOKEN}${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': PROXY_TOKEN },
      body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }),
    });
  const expected = { ...MOCK_EXPECTED_USAGE['gemini-generate'], model: 'gemini-x' };

  it('generateContent: key moved from query/header to the real x-goog-api-key', async () => {
    const body = (await (await call('generateContent')).json()) as { usageMetadata: unknown };
    assert.ok(body.usageMetadata);
    assert.equal(mock.requests[0].path, '/v1beta/models/gemini-x:generateContent');
    assert.equal(mock.requests[0].headers['x-goog-api-key'], REAL_KEYS.gemini);
    assert.ok(!allHeaderValues(mock).includes(PROXY_TOKEN));
    assert.deepEqual((await proxy.result(0)).usage, expected);
  });

  it('streamGenerateContent with alt=sse', async () => {
    const text = await (await call('streamGenerateContent', '&alt=sse')).text();
    assert.equal(text.split('data: ').length - 1, 3);
    assert.equal(mock.requests[0].path, '/v1beta/models/gemini-x:streamGenerateContent?alt=sse');
    assert.deepEqual((await proxy.result(0)).usage, expected);
  });

  it('streamGenerateContent as a JSON array', async () => {
    const array = (await (await call('streamGenerateContent')).json()) as unknown[];
    assert.equal(array.length, 3);
    assert.deepEqual((await proxy.result(0)).usage, expected);
  });
});

describe('forwardToProvider: streaming, aborts and failures', () => {
  let mock: MockProvider;
  let proxy: TestProxy;

  beforeEach(async () => {
    mock = await startMockProvider();
    proxy = await startTestProxy(mock);
  });
  afterEach(async () => {
    await proxy.close();
    await mock.close();
  });

  it('passes SSE through incrementally: the first event arrives before the provider sends the last', async () => {
    mock.setBehaviour({ textChunks: 5, chunkDelayMs: 80 });
    const { res } = await rawPost(proxy.url, '/anthropic/v1/messages', { model: 'claude-x', stream: true });
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
    const first = await new Promise<string>((resolve) =>
      res.once('data', (chunk: Buffer) => resolve(chunk.toString())),
    );
    assert.match(first, /^event: message_start/);
    assert.equal(mock.requests[0].finished, false, 'the provider had already finished: nothing was streamed');
    assert.ok(mock.requests[0].chunksSent < 10);
    const rest = await readAll(res);
    assert.match(rest, /event: message_stop/);
    assert.deepEqual((await proxy.result(0)).usage, {
      ...MOCK_EXPECTED_USAGE['anthropic-messages'],
      model: 'claude-x',
    });
  });

  it('a client disconnect mid-stream aborts the upstream request', async () => {
    mock.setBehaviour({ textChunks: 100, chunkDelayMs: 20 });
    const { req, res } = await rawPost(proxy.url, '/anthropic/v1/messages', {
      model: 'claude-x',
      stream: true,
    });
    await new Promise((resolve) => res.once('data', resolve));
    req.destroy();
    const upstream = await mock.waitForClosed(0);
    assert.equal(upstream.aborted, true);
    assert.ok(upstream.chunksSent < 100, `provider kept streaming: ${upstream.chunksSent} chunks`);
    const result = await proxy.result(0);
    assert.equal(result.aborted, true);
    assert.equal(result.upstreamError, undefined);
    // message_start was seen: input counts are known, output is a lower bound.
    assert.equal(result.usagePartial, true);
    assert.equal(result.usage?.inputTokens, MOCK_EXPECTED_USAGE['anthropic-messages'].inputTokens);
  });

  it('passes an upstream 429 through with its body and headers', async () => {
    mock.setBehaviour({ errorStatus: 429 });
    const response = await fetch(`${proxy.url}/openai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PROXY_TOKEN}`, 'content-type': 'application/json' },
      body: '{"model":"gpt-x","messages":[]}',
    });
    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after'), '7');
    const body = (await response.json()) as { error: { type: string; code: string } };
    assert.equal(body.error.type, 'rate_limit_error');
    assert.equal(body.error.code, 'rate_limit_exceeded');
    const result = await proxy.result(0);
    assert.equal(result.status, 429);
    assert.equal(result.usage, null);
    assert.match(result.usageError ?? '', /429/);
  });

  it('answers 502 upstream_error when the provider is unreachable', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const deadProxy = await startTestProxy({ url: deadUrl });
    try {
      const response = await fetch(`${deadProxy.url}/openai/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PROXY_TOKEN}` },
        body: '{}',
      });
      assert.equal(response.status, 502);
      const body = (await response.json()) as { error: { type: string; message: string } };
      assert.equal(body.error.type, 'upstream_error');
      assert.match(body.error.message, /ECONNREFUSED/);
      assert.ok(!body.error.message.includes('127.0.0.1'), 'internal address leaked');
      const result = await deadProxy.result(0);
      assert.equal(result.status, 502);
      assert.equal(result.upstreamError, 'ECONNREFUSED');
      assert.equal(result.aborted, false);
    } finally {
      await deadProxy.close();
    }
  });

  it('answers 504 upstream_error when the provider stays silent past the idle timeout', async () => {
    const slowProxy = await startTestProxy(mock, { idleTimeoutMs: 100 });
    mock.setBehaviour({ responseDelayMs: 1000 });
    try {
      const { res } = await rawPost(slowProxy.url, '/openai/chat/completions', { model: 'gpt-x' });
      assert.equal(res.statusCode, 504);
      assert.equal(JSON.parse(await readAll(res)).error.type, 'upstream_error');
      assert.equal((await slowProxy.result(0)).upstreamError, 'ETIMEDOUT');
    } finally {
      await slowProxy.close();
    }
  });

  it('cuts the client response, rather than ending it cleanly, when the provider fails mid-stream', async () => {
    mock.setBehaviour({ textChunks: 10, chunkDelayMs: 10, resetAfterChunks: 3 });
    const { res } = await rawPost(proxy.url, '/anthropic/v1/messages', { model: 'claude-x', stream: true });
    assert.equal(res.statusCode, 200);
    const outcome = await new Promise<string>((resolve) => {
      res.on('error', () => resolve('error'));
      res.on('aborted', () => resolve('aborted'));
      res.on('end', () => resolve(res.complete ? 'complete' : 'incomplete'));
      res.resume();
    });
    assert.notEqual(outcome, 'complete');
    const result = await proxy.result(0);
    assert.equal(result.upstreamError, 'ECONNRESET');
    assert.equal(result.aborted, false);
    assert.equal(result.usagePartial, true);
  });

  it('reads usage from a gzip response the provider compressed anyway, passing the bytes through', async () => {
    mock.setBehaviour({ gzip: true, textChunks: 4 });
    const { res } = await rawPost(proxy.url, '/openai/chat/completions', {
      model: 'gpt-x',
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.equal(res.headers['content-encoding'], 'gzip');
    const first = await new Promise<Buffer>((resolve) => res.once('data', resolve));
    assert.deepEqual([...first.subarray(0, 2)], [0x1f, 0x8b]);
    res.resume();
    assert.deepEqual((await proxy.result(0)).usage, {
      ...MOCK_EXPECTED_USAGE['openai-chat'],
      model: 'gpt-x',
    });
  });

  it('streams a large request body through unchanged and drops hop-by-hop and credential headers', async () => {
    const big = JSON.stringify({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'x'.repeat(2_000_000) }],
    });
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(`${proxy.url}/openai/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': PROXY_TOKEN,
          cookie: `session_token=${PROXY_TOKEN}`,
          connection: 'keep-alive, x-hop',
          'x-hop': 'hop',
          'x-custom': 'kept',
        },
      });
      req.on('response', resolve);
      req.on('error', reject);
      // Written in pieces and without content-length, so it travels chunked end to end.
      for (let i = 0; i < big.length; i += 65_536) req.write(big.slice(i, i + 65_536));
      req.end();
    });
    await readAll(response);
    assert.equal(response.statusCode, 200);
    const seen = mock.requests[0];
    assert.equal(seen.body, big);
    assert.equal(seen.headers['x-custom'], 'kept');
    assert.equal(seen.headers['x-hop'], undefined);
    assert.equal(seen.headers.cookie, undefined);
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.ok(!allHeaderValues(mock).includes(PROXY_TOKEN));
  });

  it('rejects dot-segment paths with 400 proxy_error without calling the provider', async () => {
    const { res } = await rawPost(proxy.url, '/openai/v1/%2e%2e/admin', {});
    assert.equal(res.statusCode, 400);
    assert.equal(JSON.parse(await readAll(res)).error.type, 'proxy_error');
    assert.equal(mock.requests.length, 0);
  });

  it('refuses to forward a body that was already consumed', async () => {
    const consuming = await startTestProxy(mock, { consumeBody: true });
    try {
      const { res } = await rawPost(consuming.url, '/openai/chat/completions', { model: 'gpt-x' });
      assert.equal(res.statusCode, 500);
      assert.equal(JSON.parse(await readAll(res)).error.type, 'proxy_error');
      assert.equal(mock.requests.length, 0);
    } finally {
      await consuming.close();
    }
  });

  it('cancels through the signal: the upstream request is aborted and the client cut off', async () => {
    const controller = new AbortController();
    const cancellable = await startTestProxy(mock, { signal: controller.signal });
    mock.setBehaviour({ textChunks: 100, chunkDelayMs: 20 });
    try {
      const { res } = await rawPost(cancellable.url, '/anthropic/v1/messages', {
        model: 'claude-x',
        stream: true,
      });
      await new Promise((resolve) => res.once('data', resolve));
      controller.abort();
      const upstream = await mock.waitForClosed(0);
      assert.equal(upstream.aborted, true);
      const result = await cancellable.result(0);
      assert.equal(result.aborted, true);
    } finally {
      await cancellable.close();
    }
  });
});
