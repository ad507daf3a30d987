// SAML login end to end over real HTTP with a samlify IdP in the test process (test/fixtures/saml-idp.ts):
// SP metadata; GET /api/sso/login/<name> -> 302 to the IdP with a redirect-binding AuthnRequest whose id
// is bound to the RelayState; the IdP's signed response posted to the ACS provisions and links a user,
// gives a working session and redirects (303) to the bound return_to; a second login reuses the user;
// a response signed over the whole Response (not the assertion) is accepted too.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { postToAcs, type SpView, startSamlLogin, TestSamlIdp, toBase64 } from '../../fixtures/saml-idp.ts';
import { createTenant, uniqueName } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session, sessionCookieOf } from '../../support/session.ts';

let app: TestApp;
let admin: Session;
let idp: TestSamlIdp;
let tenantA: number;
let spMetadata: string;
const NAME = 'corp-saml';
let sp: SpView;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  idp = new TestSamlIdp('https://idp.corp.example/saml', 'https://idp.corp.example/sso');
  tenantA = await createTenant(app, admin);
  const s = await api(app.url, 'PUT', `/api/tenants/${tenantA}/settings`, {
    auth: admin,
    body: { sso_enabled: true },
  });
  assert.equal(s.status, 200, JSON.stringify(s.body));
  sp = { entityId: `${app.url}/saml/${NAME}`, acsUrl: `${app.url}/api/sso/acs/${NAME}` };
  const r = await api(app.url, 'POST', '/api/sso/providers', {
    auth: admin,
    body: {
      name: NAME,
      provider_type: 'saml',
      client_id: sp.entityId,
      authorization_url: idp.ssoUrl,
      redirect_uri: sp.acsUrl,
      issuer_url: idp.entityId,
      tenant_id: tenantA,
      extra_params: {
        idp_x509_cert: idp.keys.certPem,
        attribute_mapping: { email: 'mail', username: 'uid', name: 'displayName' },
      },
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const md = await fetch(`${app.url}/api/sso/providers/${NAME}/metadata`);
  assert.equal(md.status, 200);
  spMetadata = await md.text();
});
after(async () => {
  await app?.close();
});

const count = async (table: string) =>
  Number((await app.database.sql.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n);

describe('SP metadata', () => {
  test('names the entity id, the ACS with HTTP-POST, NameID formats, and wants signed assertions', async () => {
    const res = await fetch(`${app.url}/api/sso/providers/${NAME}/metadata`);
    assert.match(res.headers.get('content-type')!, /xml/);
    const xml = await res.text();
    assert.ok(xml.includes(`entityID="${sp.entityId}"`), xml);
    assert.ok(xml.includes('WantAssertionsSigned="true"'));
    assert.ok(xml.includes('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'));
    assert.ok(xml.includes(`Location="${sp.acsUrl}"`));
    assert.ok(xml.includes('nameid-format:emailAddress'));
    assert.ok(!xml.includes('PRIVATE KEY'));
  });

  test('unknown provider and a non-SAML name are 404', async () => {
    const res = await fetch(`${app.url}/api/sso/providers/nope-${Date.now()}/metadata`);
    assert.equal(res.status, 404);
  });
});

describe('SAML login', () => {
  test('a samlify IdP response provisions and links a user, the session works, and the flow redirects to return_to', async () => {
    const usersBefore = await count('users');
    // node-xmllint's process-wide hooks (see services/sso/saml/entities.ts) must not accumulate.
    const hooksBefore = [process.listenerCount('uncaughtException'), process.stdout.listenerCount('drain')];
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME, '/dashboard?tab=2');
    assert.match(started.requestId, /^_[0-9a-f]{40}$/);
    // The RelayState is stored only by its hash, bound to the request id.
    const [state] = await app.database.sql.query<{ saml_request_id: string; kind: string }>(
      'SELECT saml_request_id, kind FROM sso_login_states WHERE state_hash = ?',
      [createHash('sha256').update(started.relayState).digest('hex')],
    );
    assert.equal(state?.saml_request_id, started.requestId);
    assert.equal(state?.kind, 'saml');

    const who = uniqueName('alice');
    const b64 = await idp.samlifyResponse(
      spMetadata,
      {
        nameId: `${who}@corp.example`,
        attributes: { mail: `${who}@corp.example`, uid: who, displayName: 'Alice' },
      },
      { requestId: started.requestId },
    );
    const res = await postToAcs(app.url, NAME, { SAMLResponse: b64, RelayState: started.relayState });
    assert.equal(res.status, 303, await res.clone().text());
    assert.equal(res.headers.get('location'), '/dashboard?tab=2');
    assert.deepEqual(
      [process.listenerCount('uncaughtException'), process.stdout.listenerCount('drain')],
      hooksBefore,
      'no exit-on-drain or uncaughtException hook left behind by the schema validator',
    );
    const cookie = sessionCookieOf(res);
    assert.ok(cookie, 'a session cookie is set');
    const token = decodeURIComponent(cookie.split(';')[0]!.slice('session_token='.length));
    const me = await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.username, who);
    assert.equal(me.body.email, `${who}@corp.example`);
    assert.equal(me.body.tenant_id, tenantA);
    assert.equal(me.body.role, 'user');
    assert.equal(await count('users'), usersBefore + 1);
    const links = await app.database.sql.query<{ user_id: number; provider_name: string }>(
      'SELECT user_id, provider_name FROM sso_identities WHERE provider_user_id = ?',
      [`${who}@corp.example`],
    );
    assert.deepEqual(
      links.map((l) => [l.user_id, l.provider_name]),
      [[me.body.id, NAME]],
    );

    // Second login of the same NameID: same user, nothing new provisioned.
    const again = await startSamlLogin(app.url, idp, spMetadata, NAME);
    const b64b = await idp.samlifyResponse(
      spMetadata,
      { nameId: `${who}@corp.example`, attributes: { mail: `${who}@corp.example`, uid: who } },
      { requestId: again.requestId },
    );
    const res2 = await postToAcs(app.url, NAME, { SAMLResponse: b64b, RelayState: again.relayState });
    assert.equal(res2.status, 303);
    assert.equal(res2.headers.get('location'), '/');
    const token2 = decodeURIComponent(sessionCookieOf(res2)!.split(';')[0]!.slice('session_token='.length));
    const me2 = await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token2}` } });
    assert.equal(me2.body.id, me.body.id);
    assert.equal(await count('users'), usersBefore + 1);
    // The accepted assertion ids are remembered.
    assert.ok((await count('sso_consumed_assertions')) >= 2);
    // No NameID, assertion or certificate in the logs.
    assert.ok(!app.logs.join('').includes(b64.slice(0, 200)));
  });

  test('a response signed over the whole Response (assertion unsigned) is accepted', async () => {
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
    const who = uniqueName('bob');
    const xml = idp.responseXml(
      sp,
      { nameId: who, attributes: { mail: `${who}@corp.example` } },
      { requestId: started.requestId },
    );
    const res = await postToAcs(app.url, NAME, {
      SAMLResponse: toBase64(idp.sign(xml, 'response')),
      RelayState: started.relayState,
    });
    assert.equal(res.status, 303, await res.clone().text());
    assert.ok(sessionCookieOf(res));
  });

  test('the ACS is bound to the browser that started the login: without its cookie, refused (login CSRF)', async () => {
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
    // HttpOnly, sent with the IdP's cross-site form post (SameSite=None, so Secure), only to this ACS.
    assert.match(started.bindingCookie, /^sso_login_state=[^;]+;/);
    for (const attr of ['HttpOnly', 'Secure', 'SameSite=None', `Path=/api/sso/acs/${NAME}`])
      assert.ok(started.bindingCookie.includes(attr), `${attr} in ${started.bindingCookie}`);
    const who = uniqueName('mallory');
    const signed = () =>
      toBase64(
        idp.sign(
          idp.responseXml(
            sp,
            { nameId: who, attributes: { mail: `${who}@corp.example` } },
            { requestId: started.requestId },
          ),
          'response',
        ),
      );
    // The attacker's own, valid login, posted through a victim's browser: no binding cookie, or another login's.
    const other = await startSamlLogin(app.url, idp, spMetadata, NAME);
    for (const cookie of ['', other.bindingCookie.split(';')[0]!]) {
      const res = await postToAcs(
        app.url,
        NAME,
        { SAMLResponse: signed(), RelayState: started.relayState },
        { cookie },
      );
      assert.equal(res.status, 401, `cookie "${cookie}"`);
      assert.deepEqual(await res.json(), { error: 'SAML login failed' });
      assert.equal(sessionCookieOf(res), undefined);
    }
    const [audit] = await app.database.sql.query<{ details: string }>(
      "SELECT details FROM audit_logs WHERE action = 'SSO_SAML_REFUSED' ORDER BY id DESC LIMIT 1",
    );
    assert.match(String(audit?.details ?? ''), /browser_binding_mismatch/);
    // Refused before the RelayState was consumed: the browser that started it still completes it.
    const ok = await postToAcs(app.url, NAME, { SAMLResponse: signed(), RelayState: started.relayState });
    assert.equal(ok.status, 303, await ok.clone().text());
    assert.ok(sessionCookieOf(ok));
  });

  test('a response with both the assertion and the whole Response signed is accepted', async () => {
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
    const who = uniqueName('carol');
    const xml = idp.responseXml(
      sp,
      { nameId: who, attributes: { mail: `${who}@corp.example` } },
      { requestId: started.requestId },
    );
    const both = idp.sign(idp.sign(xml, 'assertion'), 'response');
    const res = await postToAcs(app.url, NAME, {
      SAMLResponse: toBase64(both),
      RelayState: started.relayState,
    });
    assert.equal(res.status, 303, await res.clone().text());
  });

  test('a tenant with SSO turned off refuses the login start and the ACS', async () => {
    const t = await createTenant(app, admin);
    const off = `off-saml-${Date.now()}`;
    const reg = await api(app.url, 'POST', '/api/sso/providers', {
      auth: admin,
      body: {
        name: off,
        provider_type: 'saml',
        client_id: `${app.url}/saml/${off}`,
        authorization_url: idp.ssoUrl,
        redirect_uri: `${app.url}/api/sso/acs/${off}`,
        issuer_url: idp.entityId,
        tenant_id: t,
        extra_params: { idp_x509_cert: idp.keys.certPem },
      },
    });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const start = await fetch(`${app.url}/api/sso/login/${off}`, { redirect: 'manual' });
    assert.equal(start.status, 403);
    const usersBefore = await count('users');
    const res = await postToAcs(app.url, off, { SAMLResponse: toBase64('<x/>'), RelayState: 'r' });
    assert.equal(res.status, 403);
    assert.equal(await count('users'), usersBefore);
  });
});
