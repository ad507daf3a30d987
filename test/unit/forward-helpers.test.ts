import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  requestHeadersForUpstream,
  responseHeadersForClient,
} from '../../api/llm-proxy/forwarded-headers.ts';
import { providerAuthHeaders } from '../../api/llm-proxy/provider-auth.ts';
import { buildUpstreamUrl, UpstreamUrlError } from '../../api/llm-proxy/upstream-url.ts';

describe('buildUpstreamUrl', () => {
  const path = (base: string, p: string) => buildUpstreamUrl(base, p).path;

  it('joins base path and caller path', () => {
    assert.equal(path('https://api.openai.com/v1', '/chat/completions'), '/v1/chat/completions');
    assert.equal(path('https://api.anthropic.com', '/v1/messages'), '/v1/messages');
    assert.equal(path('https://api.anthropic.com/', 'v1/messages'), '/v1/messages');
    assert.equal(path('https://gw.example/tenant/', '/v1/x?a=1'), '/tenant/v1/x?a=1');
  });

  it('uses a version segment once when both base and path carry it', () => {
    assert.equal(path('https://api.openai.com/v1', '/v1/chat/completions'), '/v1/chat/completions');
    assert.equal(path('https://api.openai.com/v1/', '/v1/responses'), '/v1/responses');
    assert.equal(
      path('https://generativelanguage.googleapis.com/v1beta', '/v1beta/models/g:generateContent?alt=sse'),
      '/v1beta/models/g:generateContent?alt=sse',
    );
    // Not a version segment: kept as given.
    assert.equal(path('https://x.example/openai', '/openai/deployments'), '/openai/openai/deployments');
  });

  it('removes only the key query parameter', () => {
    assert.equal(
      path('https://g.example/v1beta', '/models/m:streamGenerateContent?alt=sse&key=svcpt_abc'),
      '/v1beta/models/m:streamGenerateContent?alt=sse',
    );
    assert.equal(path('https://g.example', '/m?key=svcpt_abc'), '/m');
    assert.equal(path('https://g.example', '/m?monkey=1'), '/m?monkey=1');
  });

  it('keeps the base URL query first', () => {
    assert.equal(
      path('https://az.example/openai?api-version=2024-10-21', '/chat/completions?x=1'),
      '/openai/chat/completions?api-version=2024-10-21&x=1',
    );
  });

  it('resolves host, port and protocol, including bare IPv6', () => {
    assert.deepEqual(buildUpstreamUrl('https://api.openai.com/v1', '/models'), {
      protocol: 'https:',
      hostname: 'api.openai.com',
      port: 443,
      path: '/v1/models',
    });
    const local = buildUpstreamUrl('http://[::1]:8080', '/v1/models');
    assert.equal(local.hostname, '::1');
    assert.equal(local.port, 8080);
  });

  it('rejects dot segments, literal or encoded, and unusable bases', () => {
    for (const bad of ['/../admin', '/v1/./x', '/v1/%2e%2e/x', '/v1/..']) {
      assert.throws(
        () => buildUpstreamUrl('https://api.example/v1', bad),
        (e: unknown) => e instanceof UpstreamUrlError && e.kind === 'bad_path',
        bad,
      );
    }
    assert.equal(
      path('https://api.example', '/v1/models/gemini-1.5-flash:generateContent'),
      '/v1/models/gemini-1.5-flash:generateContent',
    );
    for (const bad of ['not a url', 'ftp://x.example', '']) {
      assert.throws(
        () => buildUpstreamUrl(bad, '/v1'),
        (e: unknown) => e instanceof UpstreamUrlError && e.kind === 'bad_base',
        bad,
      );
    }
  });
});

describe('requestHeadersForUpstream', () => {
  // biome-ignore format: one name/value pair per line
  const raw = [
    'Host', 'proxy.local',
    'Authorization', 'Bearer svcpt_caller',
    'X-Api-Key', 'svcpt_caller',
    'x-goog-api-key', 'svcpt_caller',
    'api-key', 'svcpt_caller',
    'Cookie', 'session_token=abc',
    'Connection', 'keep-alive, X-Hop',
    'X-Hop', 'drop me',
    'Keep-Alive', 'timeout=5',
    'Transfer-Encoding', 'chunked',
    'TE', 'trailers',
    'Proxy-Authorization', 'Basic x',
    'Expect', '100-continue',
    'Accept-Encoding', 'gzip, br',
    'Content-Type', 'application/json',
    'anthropic-version', '2023-06-01',
    'X-Multi', 'a',
    'x-multi', 'b',
  ];

  it('drops hop-by-hop headers and every caller credential, then sets the provider auth', () => {
    const headers = requestHeadersForUpstream(raw, providerAuthHeaders('anthropic', 'sk-ant-real'));
    assert.deepEqual(headers, {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-multi': ['a', 'b'],
      'accept-encoding': 'identity',
      'x-api-key': 'sk-ant-real',
    });
  });

  it('puts each provider key in its own header', () => {
    assert.equal(
      requestHeadersForUpstream(raw, providerAuthHeaders('openai', 'sk-real')).authorization,
      'Bearer sk-real',
    );
    assert.equal(
      requestHeadersForUpstream(raw, providerAuthHeaders('gemini', 'AIza-real'))['x-goog-api-key'],
      'AIza-real',
    );
    assert.equal(
      JSON.stringify(requestHeadersForUpstream(raw, providerAuthHeaders('gemini', 'AIza-real'))).includes(
        'svcpt_',
      ),
      false,
    );
  });
});

describe('responseHeadersForClient', () => {
  it('passes back only the allow-listed headers, with their case and repeats', () => {
    // biome-ignore format: one name/value pair per line
    const raw = [
      'Content-Type', 'text/event-stream',
      'Transfer-Encoding', 'chunked',
      'Connection', 'keep-alive, X-Internal',
      'X-Internal', 'x',
      'Keep-Alive', 'timeout=60',
      'Set-Cookie', 'a=1',
      'Set-Cookie', 'b=2',
      'Server', 'envoy',
      'x-envoy-upstream-service-time', '12',
      'anthropic-organization-id', 'org-1',
      'x-request-id', 'req_1',
      'request-id', 'req_2',
      'retry-after', '7',
      'x-should-retry', 'false',
      'anthropic-ratelimit-requests-remaining', '9',
      'x-ratelimit-remaining-tokens', '100',
      'Cache-Control', 'no-cache',
    ];
    // biome-ignore format: one name/value pair per line
    assert.deepEqual(responseHeadersForClient(raw), [
      'Content-Type', 'text/event-stream',
      'x-request-id', 'req_1',
      'request-id', 'req_2',
      'retry-after', '7',
      'x-should-retry', 'false',
      'anthropic-ratelimit-requests-remaining', '9',
      'x-ratelimit-remaining-tokens', '100',
      'Cache-Control', 'no-cache',
    ]);
  });

  it('keeps content-length only when it is a plain number', () => {
    assert.deepEqual(responseHeadersForClient(['Content-Length', '12']), ['Content-Length', '12']);
    assert.deepEqual(responseHeadersForClient(['Content-Length', '12, 13']), []);
  });
});
