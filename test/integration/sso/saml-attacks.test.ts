// The SAML attack corpus of issue 12, each driven over real HTTP exactly like a login (GET
// /api/sso/login/<name> -> AuthnRequest id read by the samlify IdP -> crafted response POSTed to the ACS).
// Every case must: answer 401 {error: "SAML login failed"} with no session cookie; provision nothing
// (users, sso_identities and sessions unchanged); and write SSO_SAML_REFUSED with the precise reason.
// Crafted responses are samlify's template edited with @xmldom/xmldom and signed with xml-crypto, with
// this IdP's key when the attack needs a valid signature over some (other) element.
// store-independent: SAML response validation; the refusal's audit and provisioning rows are the same
//   writes saml-login covers on both stores
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DOMParser, XMLSerializer } from '@xmldom/xmldom';
import {
  generateKeyMaterial,
  newId,
  postToAcs,
  type SpView,
  type StartedLogin,
  startSamlLogin,
  TestSamlIdp,
  toBase64,
} from '../../fixtures/saml-idp.ts';
import { createTenant, uniqueName } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session, sessionCookieOf } from '../../support/session.ts';

let app: TestApp;
let admin: Session;
let idp: TestSamlIdp;
let spMetadata: string;
let sp: SpView;
const NAME = 'attack-saml';
const NS_A = 'urn:oasis:names:tc:SAML:2.0:assertion';
const NS_P = 'urn:oasis:names:tc:SAML:2.0:protocol';

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  idp = new TestSamlIdp('https://idp.attack.example/saml', 'https://idp.attack.example/sso');
  const tenant = await createTenant(app, admin);
  const s = await api(app.url, 'PUT', `/api/tenants/${tenant}/settings`, {
    auth: admin,
    body: { sso_enabled: true },
  });
  assert.equal(s.status, 200);
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
      tenant_id: tenant,
      extra_params: { idp_x509_cert: idp.keys.certPem },
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  spMetadata = await (await fetch(`${app.url}/api/sso/providers/${NAME}/metadata`)).text();
});
after(async () => {
  await app?.close();
});

const count = async (table: string) =>
  Number((await app.database.sql.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n);
const snapshot = async () => ({
  users: await count('users'),
  identities: await count('sso_identities'),
  sessions: await count('sessions'),
});
const lastRefusal = async () => {
  const rows = await app.database.sql.query<{ details: string; success: unknown }>(
    "SELECT details, success FROM audit_logs WHERE action = 'SSO_SAML_REFUSED' ORDER BY id DESC LIMIT 1",
  );
  return rows[0] ? (JSON.parse(rows[0].details) as { reason: string; provider: string }) : undefined;
};

/** A victim the attacker wants to become, and a fresh one per case. */
const victim = () => {
  const who = uniqueName('victim');
  return { nameId: `${who}@corp.example`, attributes: { email: `${who}@corp.example` } };
};

const parse = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml');
const serialize = (doc: ReturnType<typeof parse>) => new XMLSerializer().serializeToString(doc);
const assertionsOf = (doc: ReturnType<typeof parse>) =>
  Array.from(doc.getElementsByTagNameNS(NS_A, 'Assertion'));

/** A correctly signed response (assertion signed) for this login. */
const validXml = (s: StartedLogin, user = victim()) =>
  idp.sign(idp.responseXml(sp, user, { requestId: s.requestId }), 'assertion');

/** Runs one attack and checks the refusal, the audit reason and that nothing was provisioned. */
async function expectRefused(
  reason: string,
  build: (s: StartedLogin) => string | Promise<string>,
  opts: { relayState?: (s: StartedLogin) => string | undefined; raw?: boolean; cookie?: string } = {},
) {
  const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
  const payload = await build(started);
  const before = await snapshot();
  const res = await postToAcs(
    app.url,
    NAME,
    {
      SAMLResponse: opts.raw ? payload : toBase64(payload),
      RelayState: opts.relayState ? opts.relayState(started) : started.relayState,
    },
    { cookie: opts.cookie },
  );
  const text = await res.text();
  assert.equal(res.status, 401, text);
  assert.deepEqual(JSON.parse(text), { error: 'SAML login failed' });
  assert.equal(sessionCookieOf(res), undefined);
  assert.deepEqual(await snapshot(), before, 'nothing provisioned, linked or logged in');
  const audit = await lastRefusal();
  assert.equal(audit?.reason, reason);
  assert.equal(audit?.provider, NAME);
}

describe('signature', () => {
  test('unsigned response', async () => {
    await expectRefused('unsigned', (s) => idp.responseXml(sp, victim(), { requestId: s.requestId }));
  });

  test('signed by another key (its certificate in KeyInfo)', async () => {
    const other = generateKeyMaterial('evil-idp');
    await expectRefused('signature_untrusted_certificate', (s) =>
      idp.sign(idp.responseXml(sp, victim(), { requestId: s.requestId }), 'assertion', other),
    );
  });

  test('signed by another key (no KeyInfo: checked against the configured certificate)', async () => {
    const other = generateKeyMaterial('evil-idp-2');
    await expectRefused('signature_invalid', (s) =>
      idp.sign(idp.responseXml(sp, victim(), { requestId: s.requestId }), 'assertion', other, {
        keyInfo: false,
      }),
    );
  });

  test('signed response whose whole-response signature is by another key', async () => {
    const other = generateKeyMaterial('evil-idp-3');
    await expectRefused('signature_untrusted_certificate', (s) =>
      idp.sign(idp.responseXml(sp, victim(), { requestId: s.requestId }), 'response', other),
    );
  });

  test('assertion edited after signing (email swapped)', async () => {
    await expectRefused('signature_invalid', (s) => validXml(s).replace(/@corp\.example</, '@evil.example<'));
  });
});

describe('XML signature wrapping', () => {
  test('evil assertion first, the genuinely signed one after it', async () => {
    await expectRefused('wrapping_multiple_assertions', (s) => {
      const doc = parse(validXml(s));
      const signed = assertionsOf(doc)[0]!;
      const evil = parse(
        idp.responseXml(
          sp,
          { nameId: 'admin@corp.example', attributes: { email: 'admin@corp.example' } },
          { requestId: s.requestId },
        ),
      );
      const evilAssertion = doc.importNode(assertionsOf(evil)[0]!, true);
      doc.documentElement!.insertBefore(evilAssertion, signed);
      return serialize(doc);
    });
  });

  test('signed assertion moved inside the evil assertion (SubjectConfirmationData)', async () => {
    await expectRefused('wrapping_multiple_assertions', (s) => {
      const doc = parse(validXml(s));
      const signed = assertionsOf(doc)[0]!;
      const evilDoc = parse(
        idp.responseXml(
          sp,
          { nameId: 'admin@corp.example', attributes: { email: 'admin@corp.example' } },
          { requestId: s.requestId },
        ),
      );
      const evil = doc.importNode(assertionsOf(evilDoc)[0]!, true);
      doc.documentElement!.replaceChild(evil, signed);
      const scd = evil.getElementsByTagNameNS(NS_A, 'SubjectConfirmationData')[0]!;
      scd.appendChild(signed);
      return serialize(doc);
    });
  });

  test('a second assertion in a foreign namespace (matched by local name elsewhere)', async () => {
    await expectRefused('wrapping_multiple_assertions', (s) =>
      validXml(s).replace(
        '<samlp:Status>',
        '<samlp:Extensions><evil:Assertion xmlns:evil="urn:evil" ID="_evil1"><evil:Subject>admin@corp.example</evil:Subject></evil:Assertion></samlp:Extensions><samlp:Status>',
      ),
    );
  });

  test('signed assertion duplicated', async () => {
    await expectRefused('wrapping_multiple_assertions', (s) => {
      const doc = parse(validXml(s));
      const signed = assertionsOf(doc)[0]!;
      doc.documentElement!.appendChild(signed.cloneNode(true));
      return serialize(doc);
    });
  });

  test('signed response moved into Extensions of an evil response', async () => {
    await expectRefused('wrapping_multiple_assertions', (s) => {
      const signedResponse = parse(
        idp.sign(idp.responseXml(sp, victim(), { requestId: s.requestId }), 'response'),
      );
      const evil = parse(
        idp.responseXml(
          sp,
          { nameId: 'admin@corp.example', attributes: { email: 'admin@corp.example' } },
          { requestId: s.requestId },
        ),
      );
      const ext = evil.createElementNS(NS_P, 'samlp:Extensions');
      ext.appendChild(evil.importNode(signedResponse.documentElement!, true));
      const root = evil.documentElement!;
      root.insertBefore(ext, root.getElementsByTagNameNS(NS_P, 'Status')[0]!);
      return serialize(evil);
    });
  });

  test('evil assertion carrying the signature copied from the genuine one (same ID)', async () => {
    await expectRefused('signature_invalid', (s) => {
      const doc = parse(validXml(s));
      const signed = assertionsOf(doc)[0]!;
      const id = signed.getAttribute('ID')!;
      const evilDoc = parse(
        idp.responseXml(
          sp,
          { nameId: 'admin@corp.example', attributes: { email: 'admin@corp.example' } },
          { requestId: s.requestId, assertionId: id },
        ),
      );
      const evil = doc.importNode(assertionsOf(evilDoc)[0]!, true);
      const sig = signed.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0]!;
      const issuer = evil.getElementsByTagNameNS(NS_A, 'Issuer')[0]!;
      evil.insertBefore(sig, issuer.nextSibling);
      doc.documentElement!.replaceChild(evil, signed);
      return serialize(doc);
    });
  });

  test('a valid signature over another element (in Extensions) with an unsigned evil assertion', async () => {
    await expectRefused('wrapping_signature_reference_mismatch', (s) => {
      const evil = idp
        .responseXml(
          sp,
          { nameId: 'admin@corp.example', attributes: { email: 'admin@corp.example' } },
          { requestId: s.requestId },
        )
        .replace(
          '<samlp:Status>',
          '<samlp:Extensions><x:Note xmlns:x="urn:test:note" ID="_note1">signed by the IdP</x:Note></samlp:Extensions><samlp:Status>',
        );
      return idp.signElement(
        evil,
        "//*[local-name(.)='Note']",
        "/*[local-name(.)='Response']/*[local-name(.)='Issuer']",
      );
    });
  });
});

describe('subject and conditions', () => {
  test('comment injection in NameID (signature still valid under exclusive c14n)', async () => {
    const who = uniqueName('victim');
    await expectRefused('nameid_contains_comment', (s) =>
      idp.sign(
        idp.responseXml(
          sp,
          { nameId: 'ignored', attributes: { email: `${who}@corp.example.attacker` } },
          { requestId: s.requestId, rawNameId: `${who}@corp.example<!---->.attacker` },
        ),
        'assertion',
      ),
    );
  });

  const signed = (s: StartedLogin, spec: Parameters<TestSamlIdp['responseXml']>[2], user = victim()) =>
    idp.sign(idp.responseXml(sp, user, { requestId: s.requestId, ...spec }), 'assertion');

  test('wrong audience', async () => {
    await expectRefused('audience_mismatch', (s) => signed(s, { audience: 'https://other-sp.example' }));
  });
  test('wrong Destination', async () => {
    await expectRefused('destination_mismatch', (s) =>
      signed(s, { destination: 'https://other-sp.example/acs' }),
    );
  });
  test('wrong Recipient', async () => {
    await expectRefused('recipient_mismatch', (s) =>
      signed(s, { recipient: 'https://other-sp.example/acs' }),
    );
  });
  test('wrong InResponseTo (an id this SP never bound to the RelayState)', async () => {
    await expectRefused('in_response_to_mismatch', (s) => signed(s, { requestId: newId() }));
  });
  test('InResponseTo of the confirmation differs from the Response', async () => {
    await expectRefused('in_response_to_mismatch', (s) => signed(s, { confirmationRequestId: newId() }));
  });
  test('missing InResponseTo', async () => {
    await expectRefused('in_response_to_missing', (s) => signed(s, { requestId: null }));
  });
  test('expired assertion', async () => {
    const now = Date.now();
    await expectRefused('assertion_expired', (s) =>
      signed(s, { notBefore: new Date(now - 20 * 60_000), notOnOrAfter: new Date(now - 10 * 60_000) }),
    );
  });
  test('not-yet-valid assertion', async () => {
    const now = Date.now();
    await expectRefused('assertion_not_yet_valid', (s) =>
      signed(s, { notBefore: new Date(now + 10 * 60_000), notOnOrAfter: new Date(now + 20 * 60_000) }),
    );
  });
  test('expired subject confirmation inside valid conditions', async () => {
    const now = Date.now();
    await expectRefused('confirmation_expired', (s) =>
      signed(s, {
        notOnOrAfter: new Date(now + 5 * 60_000),
        confirmationNotOnOrAfter: new Date(now - 5 * 60_000),
      }),
    );
  });
  test('wrong issuer (signed with the right key)', async () => {
    await expectRefused('issuer_mismatch', (s) => signed(s, { issuer: 'https://evil-idp.example' }));
  });
  test('failure status', async () => {
    await expectRefused('status_not_success', (s) =>
      signed(s, { status: 'urn:oasis:names:tc:SAML:2.0:status:Requester' }),
    );
  });
  test('missing email attribute', async () => {
    await expectRefused('email_attribute_missing', (s) =>
      signed(s, {}, { nameId: `${uniqueName('x')}@corp.example`, attributes: {} as { email: string } }),
    );
  });

  test('clock skew under 2 minutes is tolerated (NotBefore 60 s ahead)', async () => {
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
    const res = await postToAcs(app.url, NAME, {
      SAMLResponse: toBase64(signed(started, { notBefore: new Date(Date.now() + 60_000) })),
      RelayState: started.relayState,
    });
    assert.equal(res.status, 303, await res.clone().text());
  });
});

describe('XML parsing', () => {
  test('schema-invalid response (signed, otherwise correct): refused by samlify with the xmllint validator', async () => {
    await expectRefused('schema_invalid', (s) =>
      idp.sign(
        idp
          .responseXml(sp, victim(), { requestId: s.requestId })
          .replace('<samlp:Status>', '<samlp:Unexpected/><samlp:Status>'),
        'assertion',
      ),
    );
  });

  test('DTD with an external entity', async () => {
    await expectRefused('dtd_or_entity_declared', (s) => {
      const xml = validXml(s);
      return `<?xml version="1.0"?><!DOCTYPE samlp:Response [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${xml.replace(
        /@corp\.example</,
        '@corp.example&xxe;<',
      )}`;
    });
  });
  test('internal entity expansion (billion laughs shape)', async () => {
    await expectRefused('dtd_or_entity_declared', (s) => {
      const lol = '<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">';
      return `<!DOCTYPE r [${lol}]>${validXml(s)}`;
    });
  });
  test('UTF-16 encoded payload (the DTD hidden from a byte-level check)', async () => {
    await expectRefused(
      'xml_malformed',
      (s) =>
        Buffer.from(
          `\ufeff<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${validXml(s)}`,
          'utf16le',
        ).toString('base64'),
      { raw: true },
    );
  });
  test('not base64, and missing SAMLResponse', async () => {
    await expectRefused('saml_response_not_base64', () => '<samlp:Response/>', { raw: true });
    await expectRefused('saml_response_missing', () => '', { raw: true });
  });
});

describe('replay and RelayState', () => {
  test('replayed response: refused with the same RelayState and with a fresh one', async () => {
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
    const body = toBase64(validXml(started));
    const ok = await postToAcs(app.url, NAME, { SAMLResponse: body, RelayState: started.relayState });
    assert.equal(ok.status, 303, await ok.clone().text());
    await expectRefused('assertion_replayed', () => body, {
      raw: true,
      relayState: () => started.relayState,
    });
    await expectRefused('assertion_replayed', () => body, { raw: true });
  });

  test('the same response posted twice at once: exactly one login', async () => {
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
    const body = toBase64(validXml(started));
    const before = await snapshot();
    const results = await Promise.all(
      [0, 1, 2].map(() => postToAcs(app.url, NAME, { SAMLResponse: body, RelayState: started.relayState })),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [303, 401, 401]);
    const after = await snapshot();
    assert.equal(after.users, before.users + 1);
    assert.equal(after.identities, before.identities + 1);
    assert.equal(after.sessions, before.sessions + 1);
  });

  test('RelayState unknown, missing, or already used', async () => {
    // A made-up RelayState has no binding cookie in any browser; with a forged one it is still unknown.
    await expectRefused('browser_binding_mismatch', (s) => validXml(s), {
      relayState: () => 'not-a-state-we-issued',
    });
    await expectRefused('relay_unknown_state', (s) => validXml(s), {
      relayState: () => 'not-a-state-we-issued',
      cookie: 'sso_login_state=not-a-state-we-issued',
    });
    await expectRefused('relay_state_missing', (s) => validXml(s), { relayState: () => undefined });
    // A RelayState consumed by a completed login cannot carry a second (fresh) assertion.
    const started = await startSamlLogin(app.url, idp, spMetadata, NAME);
    const ok = await postToAcs(app.url, NAME, {
      SAMLResponse: toBase64(validXml(started)),
      RelayState: started.relayState,
    });
    assert.equal(ok.status, 303);
    await expectRefused('relay_state_replayed', () => validXml(started), {
      relayState: () => started.relayState,
    });
  });

  test('RelayState of another SAML provider', async () => {
    const other = `other-saml-${Date.now()}`;
    const r = await api(app.url, 'POST', '/api/sso/providers', {
      auth: admin,
      body: {
        name: other,
        provider_type: 'saml',
        client_id: `${app.url}/saml/${other}`,
        authorization_url: idp.ssoUrl,
        redirect_uri: `${app.url}/api/sso/acs/${other}`,
        issuer_url: idp.entityId,
        extra_params: { idp_x509_cert: idp.keys.certPem },
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const otherMd = await (await fetch(`${app.url}/api/sso/providers/${other}/metadata`)).text();
    const foreign = await startSamlLogin(app.url, idp, otherMd, other);
    await expectRefused('relay_state_other_provider', (s) => validXml(s), {
      relayState: () => foreign.relayState,
    });
  });

  test('an oversized body is refused before parsing', async () => {
    const before = await snapshot();
    const res = await postToAcs(app.url, NAME, { SAMLResponse: 'A'.repeat(600 * 1024), RelayState: 'x' });
    assert.equal(res.status, 413);
    assert.deepEqual(await snapshot(), before);
  });
});
