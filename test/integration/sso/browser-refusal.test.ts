// A refused SSO login answered to a person's browser (api/routes/sso/browser-refusal.ts): a top-level
// navigation (Sec-Fetch-Mode: navigate, or an Accept that prefers HTML from a browser without fetch
// metadata) is redirected to /login?sso_error=<code>; every other client keeps the JSON refusal with its
// status. Covers the login start (unknown provider, unsafe return_to, tenant with SSO off), the OIDC
// callback (no state) and the SAML ACS (303 after the POST; a forged SAMLResponse). The browser side
// (the login page's words) is test/browser/oidc-login.test.ts.
import assert from 'node:assert/strict';
import { type IncomingHttpHeaders, request } from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { TestSamlIdp } from '../../fixtures/saml-idp.ts';
import { createTenant } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session } from '../../support/session.ts';

let app: TestApp;
let admin: Session;
const SAML = `saml-browser-${Date.now()}`;
const OFF = `off-browser-${Date.now()}`;

const NAVIGATE = { 'sec-fetch-mode': 'navigate', accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const OLD_BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

async function samlProvider(name: string, tenantId: number, idp: TestSamlIdp) {
  const r = await api(app.url, 'POST', '/api/sso/providers', {
    auth: admin,
    body: {
      name,
      provider_type: 'saml',
      client_id: `${app.url}/saml/${name}`,
      authorization_url: idp.ssoUrl,
      redirect_uri: `${app.url}/api/sso/acs/${name}`,
      issuer_url: idp.entityId,
      tenant_id: tenantId,
      extra_params: { idp_x509_cert: idp.keys.certPem },
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  const idp = new TestSamlIdp('https://idp.corp.example/saml', 'https://idp.corp.example/sso');
  const on = await createTenant(app, admin);
  const s = await api(app.url, 'PUT', `/api/tenants/${on}/settings`, {
    auth: admin,
    body: { sso_enabled: true },
  });
  assert.equal(s.status, 200, JSON.stringify(s.body));
  await samlProvider(SAML, on, idp);
  await samlProvider(OFF, await createTenant(app, admin), idp);
});
beforeEach(() => app.clock.advance(61_000));
after(async () => {
  await app?.close();
});

/** A raw HTTP request (Node's fetch adds its own `sec-fetch-mode: cors`, which a browser would not). */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}
const get = (path: string, headers: Record<string, string> = {}) => send('GET', path, headers);

test('login start and OIDC callback: a page navigation goes to the login page with a code; API clients get JSON', async () => {
  for (const [path, code, status] of [
    ['/api/sso/login/no-such-provider', 'unknown', 404],
    [`/api/sso/login/${SAML}?return_to=${encodeURIComponent('//evil.example/x')}`, 'return_to', 400],
    [`/api/sso/login/${OFF}`, 'disabled', 403],
    ['/api/sso/callback/no-such-provider?code=x&state=y', 'unknown', 404],
  ] as const) {
    for (const headers of [NAVIGATE, OLD_BROWSER]) {
      const res = await get(path, headers);
      assert.equal(res.status, 302, `${path} ${JSON.stringify(headers)}`);
      assert.equal(res.headers.location, `/login?sso_error=${code}`, path);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    // fetch (Sec-Fetch-Mode: cors), a script asking for JSON, curl (Accept */*): the JSON refusal.
    const apiClients: Record<string, string>[] = [
      {},
      { accept: 'application/json' },
      { 'sec-fetch-mode': 'cors', accept: 'text/html' },
    ];
    for (const headers of apiClients) {
      const res = await get(path, headers);
      assert.equal(res.status, status, `${path} ${JSON.stringify(headers)}`);
      assert.match(res.headers['content-type'] ?? '', /application\/json/);
      assert.equal(typeof JSON.parse(res.text).error, 'string');
    }
  }
  // The refusal is still audited when the browser is redirected.
  const audited = await app.database.sql.query<{ details: string }>(
    "SELECT details FROM audit_logs WHERE action = 'SSO_LOGIN_REFUSED'",
  );
  assert.ok(audited.some((r) => JSON.parse(r.details).reason === 'unsafe_return_to'));
});

test('the SAML ACS: a forged response posted by a browser is answered 303 to the login page; JSON otherwise', async () => {
  const form = new URLSearchParams({
    SAMLResponse: Buffer.from('<samlp:Response>forged</samlp:Response>').toString('base64'),
    RelayState: 'not-a-state',
  });
  const post = (headers: Record<string, string>) =>
    send(
      'POST',
      `/api/sso/acs/${SAML}`,
      { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      form.toString(),
    );
  const asBrowser = await post(NAVIGATE);
  assert.equal(asBrowser.status, 303);
  assert.equal(asBrowser.headers.location, '/login?sso_error=failed');
  const asApi = await post({});
  assert.equal(asApi.status, 401);
  assert.deepEqual(JSON.parse(asApi.text), { error: 'SAML login failed' });
  // A session cookie is never set by a refusal.
  assert.ok(!(asBrowser.headers['set-cookie'] ?? []).some((c) => c.startsWith('session_token=')));
});
