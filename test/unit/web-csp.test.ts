// The web app's Content-Security-Policy: strict by default; SVC_WEB_CONNECT_ORIGINS adds the other
// instances (http(s) and the matching ws(s) origin) to connect-src only, so a terminal closed with
// 3010 may reconnect to its owner; nothing else is widened. The setting refuses non-http(s) URLs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WEB_CSP, webCsp } from '../../api/web-app.ts';
import { loadSettings } from '../../config/settings.ts';

const directive = (csp: string, name: string) =>
  csp
    .split('; ')
    .find((d) => d.startsWith(`${name} `))
    ?.split(' ')
    .slice(1);

test('no extra origins: the strict policy', () => {
  assert.equal(webCsp([]), WEB_CSP);
  assert.deepEqual(directive(WEB_CSP, 'connect-src'), ["'self'"]);
});

test('other instances are added to connect-src with their WebSocket origins, and nowhere else', () => {
  const csp = webCsp(['http://10.0.0.2:19888/some/path', 'https://api-b.example.com']);
  assert.deepEqual(directive(csp, 'connect-src'), [
    "'self'",
    'http://10.0.0.2:19888',
    'ws://10.0.0.2:19888',
    'https://api-b.example.com',
    'wss://api-b.example.com',
  ]);
  for (const d of ['default-src', 'script-src', 'style-src', 'img-src', 'form-action'])
    assert.deepEqual(directive(csp, d), directive(WEB_CSP, d), d);
});

test('SVC_WEB_CONNECT_ORIGINS takes a comma list of http(s) URLs only', () => {
  const base = { SVC_DATA_DIR: '/tmp/svc-csp-test' };
  assert.deepEqual(
    loadSettings({ ...base, SVC_WEB_CONNECT_ORIGINS: 'http://a:1, https://b' }).SVC_WEB_CONNECT_ORIGINS,
    ['http://a:1', 'https://b'],
  );
  assert.deepEqual(loadSettings(base).SVC_WEB_CONNECT_ORIGINS, []);
  assert.throws(() => loadSettings({ ...base, SVC_WEB_CONNECT_ORIGINS: 'javascript:alert(1)' }));
  assert.throws(() => loadSettings({ ...base, SVC_WEB_CONNECT_ORIGINS: 'http://x; script-src *' }));
});
