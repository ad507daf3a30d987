// OIDC login in a real Chromium against the real API and a real OpenID provider (oidc-provider, the
// SSO tests' fixture test/fixtures/oidc-provider.ts in its `pages` mode: real login and consent pages).
// The login page shows the tenant's provider as a button; a person goes through the provider's pages and
// lands on the dashboard signed in as the user the API says (/api/auth/me). The refusals are shown in
// words on the login page (api/routes/sso/browser-refusal.ts): consent denied at the provider, a
// tampered ID token, a callback opened again (state spent); and a crafted `sso_error` cannot make the
// login page say anything but its own sentences. API clients still get the JSON refusal.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { SSO_ERROR_WORDS } from '../../domain/sso/browser-errors.ts';
import { INVALID_LOGIN_STATE } from '../../services/sso/login-state.ts';
import { type OidcFixture, startOidcProvider } from '../fixtures/oidc-provider.ts';
import { createTenant, uniqueName } from '../support/actors.ts';
import { launchBrowser, newContext, screenshot, scrollsSideways } from '../support/browser.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

const PROVIDER = 'corp-sso';
const CLIENT_SECRET = `browser-client-secret-${Math.random().toString(36).slice(2)}`;

let app: TestApp;
let browser: Browser;
let admin: Session;
let idp: OidcFixture;
let tenantId: number;
let slug: string;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  idp = await startOidcProvider();
  idp.pages = true;
  slug = uniqueName('ssoweb').toLowerCase();
  tenantId = await createTenant(app, admin, slug);
  const s = await api(app.url, 'PUT', `/api/tenants/${tenantId}/settings`, {
    auth: admin,
    body: { sso_enabled: true },
  });
  assert.equal(s.status, 200, JSON.stringify(s.body));
  const redirectUri = `${app.url}/api/sso/callback/${PROVIDER}`;
  await idp.addClient(`client-${PROVIDER}`, CLIENT_SECRET, redirectUri);
  const r = await api(app.url, 'POST', '/api/sso/providers', {
    auth: admin,
    body: {
      name: PROVIDER,
      provider_type: 'oidc',
      issuer_url: idp.issuer,
      client_id: `client-${PROVIDER}`,
      client_secret: CLIENT_SECRET,
      redirect_uri: redirectUri,
      scopes: 'openid email profile',
      tenant_id: tenantId,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  browser = await launchBrowser();
});
// Unauthenticated refusals are audited at most 10 a minute per client address: a fresh window each test.
beforeEach(() => app.clock.advance(61_000));
after(async () => {
  await browser?.close();
  await idp?.close();
  await app?.close();
  assert.ok(!app.logs.join('').includes(CLIENT_SECRET), 'the client secret is never logged');
});

/** A new person at the provider, with the names a real IdP would release. */
function account(): string {
  const sub = uniqueName('sso-person');
  idp.accounts.set(sub, {
    sub,
    email: `${sub}@corp.example`,
    email_verified: true,
    preferred_username: sub,
    name: 'Browser Person',
  });
  return sub;
}

/** A fresh context; console errors of the app's own pages (the provider's pages are not ours). */
async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await (await newContext(browser, app.url)).newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && m.location().url.startsWith(app.url)) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors };
}

/** From the login page through the provider's sign-in page, up to its consent page. */
async function throughProviderLogin(page: Page, sub: string, shots?: string) {
  await page.goto(`/login?tenant=${encodeURIComponent(slug)}`);
  const button = page.getByRole('link', { name: PROVIDER, exact: true });
  await button.waitFor();
  if (shots) await screenshot(page, shots, '1-login-page');
  await button.click();
  await page.getByRole('heading', { name: 'Test identity provider: sign in' }).waitFor();
  assert.equal(new URL(page.url()).origin, idp.issuer, 'the browser is at the provider');
  await page.getByLabel('Account').fill(sub);
  if (shots) await screenshot(page, shots, '2-provider-login');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Test identity provider: allow access' }).waitFor();
  if (shots) await screenshot(page, shots, '3-provider-consent');
}

const refusedReasons = async () =>
  (
    await app.database.sql.query<{ details: string }>(
      "SELECT details FROM audit_logs WHERE action = 'SSO_LOGIN_REFUSED'",
    )
  ).map((r) => JSON.parse(r.details).reason as string);

test('the provider button leads through the provider login and consent to the dashboard, signed in', async () => {
  const sub = account();
  const { page, errors } = await newPage();
  const callbacks: string[] = [];
  page.on('request', (r) => {
    if (r.url().startsWith(`${app.url}/api/sso/callback/`)) callbacks.push(r.url());
  });
  await throughProviderLogin(page, sub, 'oidc-login');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  assert.equal(new URL(page.url()).origin, app.url);
  assert.equal(new URL(page.url()).pathname, '/');

  // The name shown is the API's user for this browser's session.
  const me = await page.evaluate(async () => {
    const r = await fetch('/api/auth/me');
    return { status: r.status, body: await r.json() };
  });
  assert.equal(me.status, 200);
  assert.equal(me.body.username, sub);
  assert.equal(me.body.email, `${sub}@corp.example`);
  assert.equal(me.body.tenant_id, tenantId);
  assert.equal(me.body.role, 'user');
  await page.getByText(me.body.username, { exact: true }).waitFor();
  const links = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
  assert.ok(!links.includes('Administration'), 'a provisioned user is no system administrator');
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'oidc-login', '4-dashboard');
  // The session cookie is HttpOnly: the page's script cannot read it.
  assert.ok(!(await page.evaluate(() => document.cookie)).includes('session_token'));
  assert.ok((await page.context().cookies()).some((c) => c.name === 'session_token' && c.httpOnly));
  assert.deepEqual(errors, []);

  // Opening the same callback again (the back button, a shared link): the state is spent, and the
  // login page says so in words; the signed-in session is untouched.
  assert.equal(callbacks.length, 1, callbacks.join('\n'));
  await page.goto(callbacks[0]!);
  await page.waitForURL('**/login?sso_error=expired');
  assert.equal((await page.getByRole('alert').textContent())?.trim(), SSO_ERROR_WORDS.expired);
  await screenshot(page, 'oidc-login', '5-callback-replayed');
  // An API client (no page navigation) still gets the JSON refusal with its status.
  const asApi = await fetch(callbacks[0]!, { redirect: 'manual' });
  assert.equal(asApi.status, 400);
  assert.deepEqual(await asApi.json(), { error: INVALID_LOGIN_STATE });
});

test('consent denied at the provider: the login page says the sign-in failed; nobody is signed in', async () => {
  const sub = account();
  const { page } = await newPage();
  await throughProviderLogin(page, sub);
  await page.getByRole('button', { name: 'Deny' }).click();
  await page.waitForURL('**/login?sso_error=failed');
  const alert = page.getByRole('alert');
  assert.equal((await alert.textContent())?.trim(), SSO_ERROR_WORDS.failed);
  // The password form is still there, and the tenant's provider button to try again.
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await page.getByRole('link', { name: PROVIDER, exact: true }).waitFor();
  await screenshot(page, 'oidc-login', 'denied');
  const check = await page.evaluate(async () => (await fetch('/api/auth/check')).json());
  assert.equal(check.authenticated, false);
  assert.ok((await refusedReasons()).includes('provider_error: access_denied'));
  const users = await app.database.sql.query('SELECT id FROM users WHERE username = ?', [sub]);
  assert.equal(users.length, 0, 'no user provisioned');
});

test('a tampered ID token: refused, shown in words, nobody provisioned', async () => {
  const sub = account();
  const { page } = await newPage();
  await throughProviderLogin(page, sub);
  idp.tamperIdToken = 'signature';
  try {
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL('**/login?sso_error=failed');
  } finally {
    idp.tamperIdToken = undefined;
  }
  assert.equal((await page.getByRole('alert').textContent())?.trim(), SSO_ERROR_WORDS.failed);
  await screenshot(page, 'oidc-login', 'tampered-id-token');
  assert.equal(
    (await page.evaluate(async () => (await fetch('/api/auth/check')).json())).authenticated,
    false,
  );
  assert.ok((await refusedReasons()).some((r) => r.startsWith('token_exchange_failed')));
  assert.equal((await app.database.sql.query('SELECT id FROM users WHERE username = ?', [sub])).length, 0);
});

test('a crafted sso_error cannot put its own words on the login page; no error without one', async () => {
  const { page } = await newPage();
  await page.goto('/login?sso_error=Call%20555-0100%20to%20restore%20your%20account');
  const alert = page.getByRole('alert');
  assert.equal((await alert.textContent())?.trim(), SSO_ERROR_WORDS.failed);
  await page.goto(`/login?sso_error=disabled&tenant=${encodeURIComponent(slug)}`);
  assert.equal((await page.getByRole('alert').textContent())?.trim(), SSO_ERROR_WORDS.disabled);
  await page.goto(`/login?tenant=${encodeURIComponent(slug)}`);
  await page.getByRole('link', { name: PROVIDER, exact: true }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  // A provider that does not exist, opened as a page: the login page, in words (not raw JSON).
  await page.goto('/api/sso/login/no-such-provider');
  await page.waitForURL('**/login?sso_error=unknown');
  assert.equal((await page.getByRole('alert').textContent())?.trim(), SSO_ERROR_WORDS.unknown);
  const asApi = await fetch(`${app.url}/api/sso/login/no-such-provider`, { redirect: 'manual' });
  assert.equal(asApi.status, 404);
  assert.match(asApi.headers.get('content-type') ?? '', /application\/json/);
});
