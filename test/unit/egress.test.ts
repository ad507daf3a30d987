/**
 * The egress policy for tenant-written provider keys: the pure rule (every refused address form and
 * spelling), the base_url shape check per writer, the connect-time guard (DNS cache, all-or-nothing
 * address check, pinning) through forwardToProvider against the mock provider over real HTTP, the
 * provider-account headers a caller may not choose, and the removal of key echoes from error bodies.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type ForwardResult, forwardToProvider } from '../../api/llm-proxy/forward.ts';
import { requestHeadersForUpstream } from '../../api/llm-proxy/forwarded-headers.ts';
import { removeKeyEchoes } from '../../api/llm-proxy/key-echo.ts';
import { providerAuthHeaders } from '../../api/llm-proxy/provider-auth.ts';
import { addressRefusal, hostRefusal } from '../../domain/egress/address-policy.ts';
import { checkBaseUrlShape } from '../../domain/egress/base-url.ts';
import { createEgressGuard, EgressDeniedError, type Resolver } from '../../services/egress/guard.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';

describe('address policy', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:7f00:1', 'loopback'], // ::ffff:127.0.0.1 as the URL parser writes it
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:a00:1', 'private'],
    ['::7f00:1', 'loopback'], // IPv4-compatible
    ['64:ff9b::a9fe:a9fe', 'link_local'], // NAT64 of 169.254.169.254
    ['2002:a9fe:a9fe::1', 'link_local'], // 6to4 of 169.254.169.254
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
  ];
  for (const [address, reason] of refused)
    it(`refuses ${address} (${reason})`, () => assert.equal(addressRefusal(address), reason));

  for (const address of ['8.8.8.8', '100.128.0.1', '172.32.0.1', '2606:4700::1111', '::ffff:808:808'])
    it(`allows public ${address}`, () => assert.equal(addressRefusal(address), null));

  it('refuses local names, whatever their case or trailing dot', () => {
    for (const h of [
      'localhost',
      'LOCALHOST.',
      'a.localhost',
      'metadata.google.internal',
      'metadata',
      'printer.local',
      'x.home.arpa',
    ])
      assert.equal(hostRefusal(h), 'local_name', h);
    assert.equal(hostRefusal('api.openai.com'), null);
    assert.equal(hostRefusal('[::1]'), 'loopback');
  });
});

describe('base_url shape per writer', () => {
  const tenant = (url: string, allow: string[] = []) => checkBaseUrlShape(url, 'tenant_admin', allow);
  const message = (r: ReturnType<typeof checkBaseUrlShape>) => (r.ok ? 'ok' : r.message);

  it('every IPv4 spelling of loopback and metadata is refused for tenant keys', () => {
    for (const url of [
      'https://127.0.0.1/v1',
      'https://2130706433/',
      'https://0x7f.1/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::1]:8443/',
      'https://169.254.169.254/latest/meta-data',
      'https://0xa9fea9fe/',
      'https://[fd00:ec2::254]/',
      'https://0.0.0.0/',
    ])
      assert.match(message(tenant(url)), /^base_url host .* (is|resolves to) an? /, url);
    assert.equal(
      message(tenant('https://2130706433/')),
      'base_url host 127.0.0.1 is a loopback address, which keys stored by a tenant administrator may not reach (ask a system administrator to add it to egress.allow_hosts)',
    );
    assert.equal(
      message(tenant('https://metadata.google.internal/computeMetadata/v1')),
      'base_url host metadata.google.internal is a local or internal host name, which keys stored by a tenant administrator may not reach (ask a system administrator to add it to egress.allow_hosts)',
    );
  });

  it('tenant keys: https only; credentials and key parameters never, for any writer', () => {
    assert.equal(
      message(tenant('http://api.example.com/v1')),
      'base_url must use https for keys stored by a tenant administrator',
    );
    for (const writer of ['tenant_admin', 'system_admin'] as const) {
      assert.equal(
        message(checkBaseUrlShape('https://user:pw@api.example.com/', writer, [])),
        'base_url must not contain credentials',
      );
      assert.equal(
        message(checkBaseUrlShape('https://api.example.com/?api_key=x', writer, [])),
        'base_url must not carry a key in its query; store the key as api_key',
      );
      assert.equal(
        message(checkBaseUrlShape('ftp://api.example.com/', writer, [])),
        'base_url must be an http or https URL',
      );
    }
  });

  it('a system administrator may point anywhere; the allow-list exempts a host for tenants', () => {
    assert.deepEqual(checkBaseUrlShape('http://10.0.0.5:8080/v1/', 'system_admin', []), {
      ok: true,
      url: 'http://10.0.0.5:8080/v1',
      host: '10.0.0.5',
      resolve: false,
    });
    assert.equal(tenant('http://127.0.0.1:9/v1', ['127.0.0.1']).ok, true);
    assert.equal(tenant('http://127.0.0.2:9/v1', ['127.0.0.1']).ok, false);
    assert.deepEqual(tenant('https://API.Example.com/v1'), {
      ok: true,
      url: 'https://api.example.com/v1',
      host: 'api.example.com',
      resolve: true,
    });
  });

  it('trailing slashes are trimmed in linear time', () => {
    const started = performance.now();
    const r = checkBaseUrlShape(`https://api.example.com/${'/'.repeat(100_000)}x`, 'system_admin', []);
    assert.equal(r.ok, true);
    assert.ok(performance.now() - started < 200);
  });
});

describe('connect-time guard', () => {
  const resolverOf = (table: Record<string, string[]>) => {
    const calls: string[] = [];
    const resolver: Resolver = async (name) => {
      calls.push(name);
      const addrs = table[name];
      if (!addrs) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { resolver, calls };
  };

  it('a name is refused when ANY of its addresses is refused; results are cached', async () => {
    const { resolver, calls } = resolverOf({
      'mixed.test': ['93.184.216.34', '10.0.0.1'],
      'ok.test': ['93.184.216.34'],
    });
    const guard = createEgressGuard([], { resolver });
    await assert.rejects(guard.resolve('mixed.test'), (e: unknown) => {
      assert.ok(e instanceof EgressDeniedError);
      assert.equal(
        e.message.startsWith('base_url host mixed.test resolves to a private network address'),
        true,
      );
      return true;
    });
    await assert.rejects(guard.resolve('mixed.test'), EgressDeniedError);
    assert.deepEqual(await guard.resolve('ok.test'), [{ address: '93.184.216.34', family: 4 }]);
    await guard.resolve('ok.test');
    assert.deepEqual(calls, ['mixed.test', 'ok.test'], 'one lookup per name within the TTL');
    await assert.rejects(guard.resolve('localhost'), EgressDeniedError);
    assert.equal(calls.length, 2, 'local names are refused without a lookup');
  });

  describe('through forwardToProvider', () => {
    let mock: MockProvider;
    let proxy: http.Server;
    let proxyUrl: string;
    let current: { base: string; guard: ReturnType<typeof createEgressGuard> | undefined };
    const results: ForwardResult[] = [];

    before(async () => {
      mock = await startMockProvider();
      proxy = http.createServer((req, res) =>
        forwardToProvider({
          req,
          res,
          provider: 'openai',
          path: req.url ?? '/',
          upstreamBase: current.base,
          providerAuth: providerAuthHeaders('openai', 'sk-real-tenant-key'),
          egress: current.guard,
          onDone: (r) => results.push(r),
        }),
      );
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    after(async () => {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
      await mock.close();
    });
    const port = () => new URL(mock.url).port;
    const models = () => fetch(`${proxyUrl}/v1/models`);

    it('a name resolving to a private address is refused with 403 egress_denied; nothing reaches it', async () => {
      const { resolver } = resolverOf({ 'rebind.test': ['127.0.0.1'] });
      current = { base: `http://rebind.test:${port()}/v1`, guard: createEgressGuard([], { resolver }) };
      const before = mock.requests.length;
      const r = await models();
      assert.equal(r.status, 403);
      assert.deepEqual(await r.json(), {
        error: {
          message:
            "The stored key's base URL points to an address that keys stored by a tenant administrator may not reach",
          type: 'egress_denied',
        },
      });
      assert.equal(mock.requests.length, before);
      assert.equal(results.at(-1)?.upstreamError, 'EGRESS_DENIED');
    });

    it('a literal metadata address is refused before any connection', async () => {
      current = { base: 'http://169.254.169.254/latest', guard: createEgressGuard([]) };
      const r = await models();
      assert.equal(r.status, 403);
      assert.equal(((await r.json()) as { error: { type: string } }).error.type, 'egress_denied');
    });

    it('the socket connects to the address the guard checked (one resolution, no second lookup)', async () => {
      // provider.test exists only in the guard's resolver: reaching the mock proves the connection
      // used the checked answer. 127.0.0.1 is allow-listed as an address.
      const { resolver, calls } = resolverOf({ 'provider.test': ['127.0.0.1'] });
      current = {
        base: `http://provider.test:${port()}/v1`,
        guard: createEgressGuard(['127.0.0.1'], { resolver, ttlMs: 0 }),
      };
      const r = await models();
      assert.equal(r.status, 200);
      assert.equal(mock.requests.at(-1)?.headers.host, `provider.test:${port()}`);
      assert.deepEqual(calls, ['provider.test']);
    });

    it('without a guard (system-admin keys) a loopback base URL is reached directly', async () => {
      current = { base: `${mock.url}/v1`, guard: undefined };
      assert.equal((await models()).status, 200);
    });
  });
});

describe('provider-account headers and key echoes', () => {
  it('OpenAI-Organization, OpenAI-Project and x-goog-user-project never reach the provider', () => {
    const headers = requestHeadersForUpstream(
      [
        'OpenAI-Organization',
        'org-x',
        'OpenAI-Project',
        'proj-x',
        'X-Goog-User-Project',
        'p',
        'OpenAI-Beta',
        'assistants=v2',
      ],
      { authorization: 'Bearer sk-real' },
    );
    assert.equal(headers['openai-organization'], undefined);
    assert.equal(headers['openai-project'], undefined);
    assert.equal(headers['x-goog-user-project'], undefined);
    assert.equal(headers['openai-beta'], 'assistants=v2');
  });

  it("OpenAI's masked key and a whole echoed key are removed", () => {
    const body = JSON.stringify({
      error: {
        message:
          'Incorrect API key provided: sk-proj-abc1*****************************xyz9. You can find your API key at https://platform.openai.com/account/api-keys.',
      },
    });
    assert.equal(
      JSON.parse(removeKeyEchoes(body, [])).error.message,
      'Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.',
    );
    assert.equal(
      removeKeyEchoes('bad key sk-live-0123456789 here', ['sk-live-0123456789']),
      'bad key [redacted] here',
    );
    assert.equal(removeKeyEchoes('a ** b', []), 'a ** b');
  });

  it('the scan is linear on hostile input', () => {
    const started = performance.now();
    removeKeyEchoes(`${'a'.repeat(500_000)}**${'*a'.repeat(200_000)}`, []);
    assert.ok(performance.now() - started < 500);
  });
});
