// Registering SAML providers (spec document 2, "SAML provider registration body") over real HTTP: the
// IdP from authorization_url + issuer_url + idp_x509_cert, from inline metadata XML, or from a metadata
// URL served by a local HTTP server and fetched exactly once; and every refusal a 400 naming the field:
// bad or private-key certificate, malformed / DTD / incomplete metadata, oversized metadata (inline and
// fetched, with and without Content-Length), non-http schemes, redirects (not followed). Who may
// register (admins only) and that nothing but public fields is ever listed.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { BadRequestError } from '../../../domain/errors.ts';
import { fetchIdpMetadata } from '../../../services/sso/saml/registration.ts';
import { TestSamlIdp } from '../../fixtures/saml-idp.ts';
import { buildCast, type Cast } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api } from '../../support/session.ts';

let app: TestApp;
let cast: Cast;
let idp: TestSamlIdp;
let metaServer: Server;
let metaUrl: string;
const hits: Record<string, number> = {};
let seq = 0;
const MiB = 1024 * 1024;

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  idp = new TestSamlIdp('https://idp.reg.example/saml', 'https://idp.reg.example/sso');
  metaServer = createServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] = (hits[path] ?? 0) + 1;
    if (path === '/metadata.xml') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' });
      res.end(idp.metadataXml());
    } else if (path === '/redirect') {
      res.writeHead(302, { location: '/metadata.xml' });
      res.end();
    } else if (path === '/huge-declared') {
      res.writeHead(200, { 'content-type': 'application/xml', 'content-length': String(MiB + 1) });
      res.end('x'.repeat(MiB + 1));
    } else if (path === '/huge-chunked') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 17; i++) res.write(chunk);
      res.end();
    } else if (path === '/hang') {
      // Never answers (the socket is closed when the server stops).
    } else if (path === '/trickle') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.write('<md:EntityDescriptor');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => metaServer.listen(0, '127.0.0.1', r));
  metaUrl = `http://127.0.0.1:${(metaServer.address() as AddressInfo).port}`;
});
after(async () => {
  await new Promise((r) => metaServer?.close(r));
  await app?.close();
});

const body = (overrides: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
  const name = `saml-reg-${++seq}-${Date.now().toString(36)}`;
  return {
    name,
    provider_type: 'saml',
    client_id: `${app.url}/saml/${name}`,
    authorization_url: idp.ssoUrl,
    redirect_uri: `${app.url}/api/sso/acs/${name}`,
    issuer_url: idp.entityId,
    extra_params: { idp_x509_cert: idp.keys.certPem, ...extra },
    ...overrides,
  };
};
const register = (b: Record<string, unknown>, auth = cast.admin) =>
  api(app.url, 'POST', '/api/sso/providers', { auth, body: b });
const storedConfig = async (name: string) => {
  const [row] = await app.database.sql.query<{ config: string }>(
    'SELECT config FROM sso_providers WHERE name = ?',
    [name],
  );
  return JSON.parse(row!.config) as Record<string, unknown>;
};
const expect400 = async (b: Record<string, unknown>, field: string) => {
  const r = await register(b);
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.ok(String(r.body.error).startsWith(`${field}:`), `error names ${field}: ${r.body.error}`);
};

describe('SAML registration: the three IdP sources', () => {
  test('authorization_url + issuer_url + idp_x509_cert (PEM or bare base64)', async () => {
    const b = body();
    const r = await register(b);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const cfg = await storedConfig(b.name);
    assert.equal(cfg.idp_source, 'certificate');
    assert.equal(cfg.idp_entity_id, idp.entityId);
    assert.equal(cfg.idp_sso_url, idp.ssoUrl);
    assert.equal(cfg.sp_entity_id, b.client_id);
    assert.equal(cfg.acs_url, b.redirect_uri);
    assert.deepEqual(cfg.idp_signing_certs, [idp.keys.certBody]);
    assert.deepEqual(cfg.attribute_mapping, { email: 'email' });
    assert.ok(!JSON.stringify(cfg).includes('PRIVATE'));

    const bare = body(
      {},
      { idp_x509_cert: idp.keys.certBody, attribute_mapping: { email: 'mail', name: 'cn' } },
    );
    const r2 = await register(bare);
    assert.equal(r2.status, 201, JSON.stringify(r2.body));
    assert.deepEqual((await storedConfig(bare.name)).attribute_mapping, { email: 'mail', name: 'cn' });

    // Listing shows public fields only.
    const list = await api(app.url, 'GET', '/api/sso/providers', { auth: cast.admin });
    const listed = list.body.providers.find((p: { name: string }) => p.name === b.name);
    assert.deepEqual(Object.keys(listed).sort(), ['login_url', 'name', 'provider_type', 'tenant_id']);
    assert.ok(!JSON.stringify(list.body).includes(idp.keys.certBody.slice(0, 40)));
  });

  test('inline metadata XML', async () => {
    const b = body(
      { authorization_url: undefined, issuer_url: undefined },
      { idp_x509_cert: undefined, idp_metadata_xml: idp.metadataXml() },
    );
    const r = await register(b);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const cfg = await storedConfig(b.name);
    assert.equal(cfg.idp_source, 'metadata_xml');
    assert.equal(cfg.idp_entity_id, idp.entityId);
    assert.equal(cfg.idp_sso_url, idp.ssoUrl);
    assert.deepEqual(cfg.idp_signing_certs, [idp.keys.certBody]);
    // And a login starts against the metadata's SSO URL.
    const start = await fetch(`${app.url}/api/sso/login/${b.name}`, { redirect: 'manual' });
    assert.equal(start.status, 302);
    assert.ok(start.headers.get('location')!.startsWith(`${idp.ssoUrl}?SAMLRequest=`));
  });

  test('metadata URL: fetched exactly once, at registration', async () => {
    const before = hits['/metadata.xml'] ?? 0;
    const b = body(
      { authorization_url: undefined },
      { idp_x509_cert: undefined, idp_metadata_url: `${metaUrl}/metadata.xml` },
    );
    const r = await register(b);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(hits['/metadata.xml'], before + 1);
    const cfg = await storedConfig(b.name);
    assert.equal(cfg.idp_source, 'metadata_url');
    assert.equal(cfg.idp_metadata_url, `${metaUrl}/metadata.xml`);
    assert.deepEqual(cfg.idp_signing_certs, [idp.keys.certBody]);
    const start = await fetch(`${app.url}/api/sso/login/${b.name}`, { redirect: 'manual' });
    assert.equal(start.status, 302);
    const md = await fetch(`${app.url}/api/sso/providers/${b.name}/metadata`);
    assert.equal(md.status, 200);
    assert.equal(hits['/metadata.xml'], before + 1, 'never fetched again');
  });
});

describe('SAML registration: refusals name the field', () => {
  test('certificate that does not parse, or a private key', async () => {
    await expect400(body({}, { idp_x509_cert: 'not a certificate' }), 'extra_params.idp_x509_cert');
    await expect400(
      body(
        {},
        {
          idp_x509_cert: `-----BEGIN CERTIFICATE-----\n${Buffer.from('garbage bytes').toString('base64')}\n-----END CERTIFICATE-----`,
        },
      ),
      'extra_params.idp_x509_cert',
    );
    await expect400(body({}, { idp_x509_cert: idp.keys.keyPem }), 'extra_params.idp_x509_cert');
  });

  test('required fields of the certificate variant', async () => {
    await expect400(body({ authorization_url: undefined }), 'authorization_url');
    await expect400(body({ issuer_url: undefined }), 'issuer_url');
    await expect400(body({}, { idp_x509_cert: undefined }), 'extra_params.idp_x509_cert');
    await expect400(body({ client_id: undefined }), 'client_id');
    await expect400(body({ redirect_uri: undefined }), 'redirect_uri');
    await expect400(body({ redirect_uri: 'javascript:alert(1)' }), 'redirect_uri');
    // The ACS URL must end with /api/sso/acs/<name> (issue 28 item 4): the OIDC callback path is not it.
    const wrong = body({ redirect_uri: `${app.url}/api/sso/callback/x` });
    const refused = await register(wrong);
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { error: `redirect_uri: must end with /api/sso/acs/${wrong.name}` });
    await expect400(body({ authorization_url: 'ftp://idp.example/sso' }), 'authorization_url');
    await expect400(body({}, { idp_entity_id: 'https://different.example' }), 'extra_params.idp_entity_id');
  });

  test('metadata XML: malformed, DTD, no IDPSSODescriptor, no signing cert, no redirect SSO, issuer mismatch, oversized', async () => {
    const field = 'extra_params.idp_metadata_xml';
    const md = idp.metadataXml();
    const variant = (xml: string, overrides: Record<string, unknown> = {}) =>
      body(
        { authorization_url: undefined, issuer_url: undefined, ...overrides },
        { idp_x509_cert: undefined, idp_metadata_xml: xml },
      );
    await expect400(variant('<EntityDescriptor'), field);
    await expect400(variant(`<!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>${md}`), field);
    await expect400(
      variant(
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>',
      ),
      field,
    );
    const noCert = md.replace(/<(\w+:)?KeyDescriptor[\s\S]*?<\/(\w+:)?KeyDescriptor>/g, '');
    assert.notEqual(noCert, md);
    await expect400(variant(noCert), field);
    const noRedirect = md
      .split('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect')
      .join('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST');
    await expect400(variant(noRedirect), field);
    await expect400(variant(md, { issuer_url: 'https://someone-else.example' }), 'issuer_url');
    await expect400(variant(md + ' '.repeat(MiB)), field);
  });

  test('metadata URL: non-http schemes, redirects not followed, oversized, unreachable, not found', async () => {
    const field = 'extra_params.idp_metadata_url';
    const variant = (url: string) =>
      body({ authorization_url: undefined }, { idp_x509_cert: undefined, idp_metadata_url: url });
    for (const url of [
      'file:///etc/passwd',
      'ftp://127.0.0.1/m.xml',
      'gopher://127.0.0.1:70/',
      'data:text/xml,<x/>',
      `http://user:pw@127.0.0.1/`,
    ])
      await expect400(variant(url), field);
    const before = hits['/metadata.xml'] ?? 0;
    await expect400(variant(`${metaUrl}/redirect`), field);
    assert.equal(hits['/metadata.xml'] ?? 0, before, 'the redirect was not followed');
    await expect400(variant(`${metaUrl}/huge-declared`), field);
    await expect400(variant(`${metaUrl}/huge-chunked`), field);
    await expect400(variant(`${metaUrl}/missing`), field);
    await expect400(variant('http://127.0.0.1:1/metadata.xml'), field);
  });
});

describe('SAML registration: who may register', () => {
  test('anonymous 401, plain user 403, a tenant admin 403 (system administrators only)', async () => {
    const anon = await api(app.url, 'POST', '/api/sso/providers', { body: body() });
    assert.equal(anon.status, 401);
    const user = await register(body(), cast.actors.user.session!);
    assert.equal(user.status, 403);
    const cross = await register(body({ tenant_id: cast.tenantA }), cast.actors.other_tenant_admin.session!);
    assert.equal(cross.status, 403);
  });

  test('a disabled provider has no SP metadata and no ACS', async () => {
    const b = body();
    assert.equal((await register(b)).status, 201);
    const del = await api(app.url, 'DELETE', `/api/sso/providers/${b.name}`, { auth: cast.admin });
    assert.ok(del.status === 200 || del.status === 204, JSON.stringify(del.body));
    assert.equal((await fetch(`${app.url}/api/sso/providers/${b.name}/metadata`)).status, 404);
  });
});

describe('SAML registration: metadata fetch timeout', () => {
  test('a server that never answers, or stalls mid-body, is given up on', async () => {
    for (const path of ['/hang', '/trickle']) {
      const t0 = Date.now();
      await assert.rejects(
        fetchIdpMetadata(`${metaUrl}${path}`, 300),
        (err: unknown) =>
          err instanceof BadRequestError &&
          err.message === 'extra_params.idp_metadata_url: could not be fetched',
      );
      assert.ok(Date.now() - t0 < 5_000, `${path} gave up in time`);
    }
  });
});
