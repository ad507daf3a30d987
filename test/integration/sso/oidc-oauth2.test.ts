// Plain OAuth2 (provider_type `oauth2`, explicit endpoints, no discovery) against the same real
// provider: code flow with PKCE S256, the identity read from the configured userinfo URL, the subject
// and username from the attribute mapping; the email is trusted as verified only when the
// administrator says so (trust_email), and a replayed state is refused here too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  driveLogin,
  followCallback,
  type OidcFixture,
  startOidcProvider,
} from '../../fixtures/oidc-provider.ts';
import { createTenant, uniqueName } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session, sessionCookieOf } from '../../support/session.ts';

let app: TestApp;
let admin: Session;
let idp: OidcFixture;
let tenant: number;

async function register(name: string, extra: Record<string, unknown> = {}) {
  const redirectUri = `${app.url}/api/sso/callback/${name}`;
  await idp.addClient(`client-${name}`, 'oauth2-secret', redirectUri);
  const r = await api(app.url, 'POST', '/api/sso/providers', {
    auth: admin,
    body: {
      name,
      provider_type: 'oauth2',
      client_id: `client-${name}`,
      client_secret: 'oauth2-secret',
      authorization_url: `${idp.issuer}/auth`,
      token_url: `${idp.issuer}/token`,
      userinfo_url: `${idp.issuer}/me`,
      redirect_uri: redirectUri,
      scopes: 'openid email profile',
      tenant_id: tenant,
      attribute_mapping: { username: 'name' },
      ...extra,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  idp = await startOidcProvider();
  tenant = await createTenant(app, admin);
  await api(app.url, 'PUT', `/api/tenants/${tenant}/settings`, { auth: admin, body: { sso_enabled: true } });
  await register('plain-oauth');
  await register('plain-oauth-trusted', { trust_email: true });
});
after(async () => {
  await idp?.close();
  await app?.close();
});

async function signIn(provider: string) {
  const sub = uniqueName('o2');
  const display = uniqueName('Display Name');
  idp.accounts.set(sub, { sub, email: `${sub}@corp.example`, email_verified: true, name: display });
  idp.loginAs = sub;
  const d = await driveLogin(idp, app.url, provider);
  assert.equal(d.authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(d.authorizationUrl.searchParams.get('nonce'), null, 'no nonce without OIDC');
  const res = await followCallback(d);
  assert.equal(res.status, 302, await res.clone().text());
  const token = decodeURIComponent(sessionCookieOf(res)!.split(';')[0]!.slice('session_token='.length));
  const me = await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } });
  return { sub, display, me: me.body, d };
}

describe('plain OAuth2', () => {
  test('provisions from the userinfo URL with the mapped username; the email is not trusted by default', async () => {
    const { sub, display, me, d } = await signIn('plain-oauth');
    assert.equal(me.tenant_id, tenant);
    assert.equal(me.username, display.replace(/ /g, '_'));
    assert.equal(me.email, null, 'an unverified OAuth2 email is not stored');
    const ids = await app.database.sql.query<{ user_id: number }>(
      'SELECT user_id FROM sso_identities WHERE provider_name = ? AND provider_user_id = ?',
      ['plain-oauth', sub],
    );
    assert.deepEqual(
      ids.map((r) => r.user_id),
      [me.id],
    );
    const replay = await followCallback(d);
    assert.equal(replay.status, 400);
  });

  test('with trust_email the email is stored', async () => {
    const { sub, me } = await signIn('plain-oauth-trusted');
    assert.equal(me.email, `${sub}@corp.example`);
  });
});
