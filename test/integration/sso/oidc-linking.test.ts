// Linking a first OIDC login to an existing local user by email (security setting
// sso_link_existing_by_email): off by default (a new user is provisioned); when on, only a verified
// email, only the one live user with that email, only inside the provider's tenant, and never a system
// administrator. An unverified email is not even stored on the provisioned user.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  driveLogin,
  followCallback,
  type OidcFixture,
  startOidcProvider,
} from '../../fixtures/oidc-provider.ts';
import { createTenant, createUser, uniqueName } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session, sessionCookieOf } from '../../support/session.ts';

let app: TestApp;
let admin: Session;
let idp: OidcFixture;
let tenantA: number;
let tenantB: number;

async function ssoLogin(
  email: string,
  verified: boolean,
): Promise<{ id: number; email: string | null; sub: string }> {
  const sub = uniqueName('sub');
  idp.accounts.set(sub, { sub, email, email_verified: verified, preferred_username: sub });
  idp.loginAs = sub;
  const d = await driveLogin(idp, app.url, 'link-idp');
  const res = await followCallback(d);
  assert.equal(res.status, 302, await res.clone().text());
  const token = decodeURIComponent(sessionCookieOf(res)!.split(';')[0]!.slice('session_token='.length));
  const me = await api(app.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } });
  assert.equal(me.status, 200);
  return { id: me.body.id, email: me.body.email, sub };
}

const setLinking = async (on: boolean) => {
  const r = await api(app.url, 'PUT', '/api/security-settings', {
    auth: admin,
    body: { sso_link_existing_by_email: on },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.settings.sso_link_existing_by_email, on);
};

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  idp = await startOidcProvider();
  tenantA = await createTenant(app, admin);
  tenantB = await createTenant(app, admin);
  await api(app.url, 'PUT', `/api/tenants/${tenantA}/settings`, { auth: admin, body: { sso_enabled: true } });
  const redirectUri = `${app.url}/api/sso/callback/link-idp`;
  await idp.addClient('link-client', 'link-secret', redirectUri);
  const r = await api(app.url, 'POST', '/api/sso/providers', {
    auth: admin,
    body: {
      name: 'link-idp',
      provider_type: 'oidc',
      issuer_url: idp.issuer,
      client_id: 'link-client',
      client_secret: 'link-secret',
      redirect_uri: redirectUri,
      tenant_id: tenantA,
    },
  });
  assert.equal(r.status, 201);
});
after(async () => {
  await idp?.close();
  await app?.close();
});

describe('linking by email', () => {
  test('the setting is off by default and refuses non-boolean values', async () => {
    const s = await api(app.url, 'GET', '/api/security-settings', { auth: admin });
    assert.equal(s.body.settings.sso_link_existing_by_email, false);
    const bad = await api(app.url, 'PUT', '/api/security-settings', {
      auth: admin,
      body: { sso_link_existing_by_email: 'yes' },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^sso_link_existing_by_email/);
  });

  test('off: a verified email equal to a local user’s provisions a new user', async () => {
    const local = await createUser(app, admin, { role: 'user', tenant_id: tenantA });
    const got = await ssoLogin(`${local.username}@example.test`, true);
    assert.notEqual(got.id, local.id);
    const ids = await app.database.sql.query<{ user_id: number }>(
      'SELECT user_id FROM sso_identities WHERE provider_user_id = ?',
      [got.sub],
    );
    assert.deepEqual(
      ids.map((r) => r.user_id),
      [got.id],
    );
  });

  test('on: a verified email links the one local user of the provider’s tenant (case-insensitive)', async () => {
    await setLinking(true);
    try {
      const local = await createUser(app, admin, { role: 'manager', tenant_id: tenantA });
      const got = await ssoLogin(`${local.username}@EXAMPLE.test`, true);
      assert.equal(got.id, local.id, 'linked to the existing user');
      const me = await api(app.url, 'GET', `/api/sso/identities/${local.id}`, { auth: admin });
      assert.deepEqual(
        me.body.identities.map((i: { provider_name: string }) => i.provider_name),
        ['link-idp'],
      );
      const [audit] = await app.database.sql.query<{ details: string }>(
        "SELECT details FROM audit_logs WHERE action = 'SSO_LOGIN' AND user_id = ? ORDER BY id DESC",
        [local.id],
      );
      assert.deepEqual(JSON.parse(audit!.details), { provider: 'link-idp', created: false, linked: true });
      // The local password still works: linking changed nothing else.
      await login(app.url, local.username, local.password);
    } finally {
      await setLinking(false);
    }
  });

  test('on: an unverified email, a user of another tenant, or a system administrator is never linked', async () => {
    await setLinking(true);
    try {
      const local = await createUser(app, admin, { role: 'user', tenant_id: tenantA });
      const unverified = await ssoLogin(`${local.username}@example.test`, false);
      assert.notEqual(unverified.id, local.id);
      assert.equal(unverified.email, null, 'an unverified email is not stored');

      const other = await createUser(app, admin, { role: 'user', tenant_id: tenantB });
      const cross = await ssoLogin(`${other.username}@example.test`, true);
      assert.notEqual(cross.id, other.id);

      const root = await createUser(app, admin, { role: 'platform_admin', tenant_id: tenantA });
      const escalation = await ssoLogin(`${root.username}@example.test`, true);
      assert.notEqual(escalation.id, root.id);
      const me = await api(app.url, 'GET', `/api/sso/identities/${root.id}`, { auth: admin });
      assert.deepEqual(me.body.identities, []);
    } finally {
      await setLinking(false);
    }
  });
});
