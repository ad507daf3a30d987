// The web application's foundation in a real Chromium against the real API: password login lands on
// the shell, a wrong password shows the API's error in words, the forced password change, the
// /manage guard for non system administrators, logout and return paths, and how the HTML and assets
// are served (CSP, caching, unknown /api paths stay JSON 404, unknown pages get the app).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createTenant, createUser } from '../support/actors.ts';
import { launchBrowser, newContext, screenshot, scrollsSideways, watchErrors } from '../support/browser.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let browser: Browser;
let admin: Session;
let tenant: number;

before(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  tenant = await createTenant(app, admin);
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function newPage(): Promise<{ page: Page; errors: string[] }> {
  const ctx = await newContext(browser, app.url);
  const page = await ctx.newPage();
  return { page, errors: watchErrors(page) };
}

async function signIn(page: Page, username: string, password: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('password login lands on the dashboard shell; an admin sees the manage nav; logout ends the session', async () => {
  const { page, errors } = await newPage();
  await page.goto('/');
  await page.waitForURL('**/login');
  await screenshot(page, 'login', 'login-page');
  await signIn(page, ADMIN.username, ADMIN.password);
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/');
  await page.getByText(ADMIN.username, { exact: true }).waitFor();
  const nav = page.getByRole('navigation', { name: 'Main' });
  const links = await nav.getByRole('link').allTextContents();
  assert.deepEqual(links, [
    'Dashboard',
    'Messages',
    'Alerts',
    'Prompts',
    'Sessions',
    'Remote workspace',
    'Autonomous development',
    'Usage report',
    'Administration',
  ]);
  assert.equal(await nav.getByRole('link', { name: 'Dashboard' }).getAttribute('aria-current'), 'page');
  assert.equal(await scrollsSideways(page), false, 'no horizontal scroll at 1280 px');
  await screenshot(page, 'login', 'admin-dashboard');

  // Client-side navigation to the admin area; the skip link targets the main area.
  await nav.getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { name: 'Administration' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/manage');
  assert.equal(await page.locator('a.skip-link').getAttribute('href'), '#main');
  await screenshot(page, 'login', 'admin-manage');

  await page.getByRole('button', { name: 'Log out' }).click();
  await page.waitForURL('**/login');
  const cookies = await page.context().cookies();
  const check = await page.evaluate(async () => (await fetch('/api/auth/check')).json());
  assert.equal(
    check.authenticated,
    false,
    `after logout: ${JSON.stringify(check)} ${JSON.stringify(cookies)}`,
  );
  await page.goto('/alerts');
  await page.waitForURL('**/login?next=%2Falerts');
  assert.deepEqual(errors, [], 'no console errors (CSP violations would show here)');
});

test('a wrong password shows the API error in words and stays on the login page', async () => {
  const expected = await api(app.url, 'POST', '/api/auth/login', {
    body: { username: ADMIN.username, password: 'not-the-password' },
  });
  assert.equal(expected.status, 401);
  const { page } = await newPage();
  await page.goto('/login');
  await signIn(page, ADMIN.username, 'not-the-password');
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.equal((await alert.textContent())?.trim(), expected.body.error);
  assert.equal(new URL(page.url()).pathname, '/login');
  await screenshot(page, 'login', 'wrong-password');
});

test('login returns to the page asked for, never to another site', async () => {
  const u = await createUser(app, admin, { role: 'user', tenant_id: tenant });
  const { page } = await newPage();
  await page.goto('/prompts');
  await page.waitForURL('**/login?next=%2Fprompts');
  await signIn(page, u.username, u.password);
  await page.getByRole('heading', { name: 'Prompts' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/prompts');

  const { page: p2 } = await newPage();
  await p2.goto('/login?next=//evil.example/x');
  await signIn(p2, u.username, u.password);
  await p2.getByRole('heading', { name: 'Dashboard' }).waitFor();
  assert.equal(new URL(p2.url()).origin, app.url);
  assert.equal(new URL(p2.url()).pathname, '/');
});

test('forced password change: the user must change it before anything else, errors in words', async () => {
  const u = await createUser(app, admin, { role: 'user', tenant_id: tenant, must_change_password: true });
  const { page, errors } = await newPage();
  await page.goto('/sessions');
  await page.waitForURL('**/login?next=%2Fsessions');
  await signIn(page, u.username, u.password);
  await page.waitForURL('**/change-password?next=%2Fsessions');
  await page.getByText('You must choose a new password').waitFor();
  await screenshot(page, 'login', 'forced-change');

  // The shell is refused while the change is pending: any app page comes back here.
  await page.goto('/alerts');
  await page.waitForURL('**/change-password?next=%2Falerts');

  const newPassword = 'a-brand-new-password-42';
  const fill = async (current: string, next: string, confirm: string) => {
    await page.getByLabel('Current password').fill(current);
    await page.getByLabel('New password', { exact: true }).fill(next);
    await page.getByLabel('Repeat the new password').fill(confirm);
    await page.getByRole('button', { name: 'Change password' }).click();
  };
  await fill(u.password, newPassword, 'something-else-entirely');
  await page.getByRole('alert').getByText('The new passwords do not match').waitFor();

  await fill('wrong-current-password', newPassword, newPassword);
  await page.getByRole('alert').getByText('Current password is incorrect').waitFor();
  await screenshot(page, 'login', 'forced-change-error');

  await fill(u.password, newPassword, newPassword);
  await page.getByRole('heading', { name: 'Alerts' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/alerts');
  await screenshot(page, 'login', 'after-change');

  const again = await login(app.url, u.username, newPassword);
  assert.equal(again.user.must_change_password, false);
  assert.equal(
    (await api(app.url, 'POST', '/api/auth/login', { body: u })).status,
    401,
    'old password refused',
  );
  assert.deepEqual(
    errors.filter((e) => !/status of 40[03]/.test(e)),
    [],
    'only the expected 400/403 answers were logged by the browser',
  );
});

test('voluntary password change from the header: policy shown, errors in words, log out, log in with the new one', async () => {
  const u = await createUser(app, admin, { role: 'user', tenant_id: tenant });
  const elsewhere = await login(app.url, u.username, u.password);
  const { page, errors } = await newPage();
  await page.goto('/prompts');
  await signIn(page, u.username, u.password);
  await page.getByRole('heading', { name: 'Prompts' }).waitFor();
  await page.getByRole('banner').getByRole('link', { name: 'Change password' }).click();
  await page.waitForURL('**/change-password?next=%2Fprompts');
  assert.equal(await page.getByText('You must choose a new password').count(), 0, 'not the forced notice');

  // The policy is the API's, shown under the new password.
  const policy = (await api(app.url, 'GET', '/api/password-policy', { auth: elsewhere })).body;
  await page.getByText(`At least ${policy.min_length} characters, at most ${policy.max_length}`).waitFor();
  await screenshot(page, 'login', 'voluntary-change');

  const fill = async (current: string, next: string) => {
    await page.getByLabel('Current password').fill(current);
    await page.getByLabel('New password', { exact: true }).fill(next);
    await page.getByLabel('Repeat the new password').fill(next);
    await page.getByRole('button', { name: 'Change password' }).click();
  };
  const short = 'x'.repeat(policy.min_length - 1);
  await fill(u.password, short);
  await page.getByRole('alert').getByText(`at least ${policy.min_length} characters`).waitFor();
  await fill(u.password, u.username);
  assert.ok(u.username.length >= policy.min_length);
  await page.getByRole('alert').getByText('Password must not be the same as the username').waitFor();
  const newPassword = 'my-own-choice-of-password-77';
  await fill('not-my-current-password', newPassword);
  await page.getByRole('alert').getByText('Current password is incorrect').waitFor();

  await fill(u.password, newPassword);
  await page.getByRole('status').getByText('Password changed').waitFor();
  await screenshot(page, 'login', 'voluntary-changed');
  // The API ended the user's other sessions; this one goes on.
  assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: elsewhere })).status, 401);
  await page.getByRole('link', { name: 'Back to the app' }).click();
  await page.getByRole('heading', { name: 'Prompts' }).waitFor();

  await page.getByRole('button', { name: 'Log out' }).click();
  await page.waitForURL('**/login');
  await signIn(page, u.username, u.password);
  await page.getByRole('alert').waitFor();
  assert.equal(new URL(page.url()).pathname, '/login', 'the old password is refused');
  await signIn(page, u.username, newPassword);
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  assert.ok(!app.logs.join('\n').includes(newPassword), 'the new password is not in the server logs');
  assert.deepEqual(
    errors.filter((m) => !/status of 40[01]/.test(m)),
    [],
    'only the expected 400/401 answers were logged by the browser',
  );
});

test('a plain or readonly user gets no Administration in the nav, and /manage/* says it is not for them', async () => {
  for (const role of ['readonly', 'user']) {
    const u = await createUser(app, admin, { role, tenant_id: tenant });
    const { page } = await newPage();
    await page.goto('/login');
    await signIn(page, u.username, u.password);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const links = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    assert.ok(!links.includes('Administration'), `${role}: ${links.join(', ')}`);
    // Messages need view_messages, which a readonly user does not hold (the API answers 403).
    assert.equal(links.includes('Messages'), role === 'user', `${role}: ${links.join(', ')}`);

    await page.goto('/manage/users');
    await page.getByRole('heading', { name: 'Not available to you', level: 1 }).waitFor();
    await page.getByRole('alert').getByText('Your role does not give access to this page').waitFor();
    assert.equal(new URL(page.url()).pathname, '/manage/users');
    await screenshot(page, 'login', `manage-refused-${role}`);
    // The API refuses them as well.
    const s = await login(app.url, u.username, u.password);
    assert.equal((await api(app.url, 'GET', '/api/admin/users', { auth: s })).status, 403);
    assert.equal((await api(app.url, 'POST', '/api/sso/providers', { auth: s, body: {} })).status, 403);
  }
});

test('serving: CSP on the HTML, no-cache HTML, immutable assets, unknown /api stays JSON 404', async () => {
  for (const p of ['/', '/login', '/some/unknown/page', '/manage/users']) {
    const res = await fetch(`${app.url}${p}`);
    const html = await res.text();
    assert.equal(res.status, 200, p);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const d of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'self'",
      "frame-ancestors 'none'",
      "form-action 'self'",
    ])
      assert.ok(csp.split('; ').includes(d), `${p}: ${d} in ${csp}`);
    assert.ok(!/unsafe-inline|unsafe-eval/.test(csp));
    assert.match(html, /<div id="app"><\/div>/);
    // No inline script: every <script> has a src.
    assert.ok(!/<script(?![^>]*\bsrc=)[^>]*>/.test(html), `${p}: inline script in ${html}`);
  }
  const html = await (await fetch(`${app.url}/`)).text();
  const js = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  const css = /href="(\/assets\/[^"]+\.css)"/.exec(html)?.[1];
  assert.ok(js && css, html);
  for (const asset of [js, css]) {
    const res = await fetch(`${app.url}${asset}`);
    assert.equal(res.status, 200, asset);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.ok((await res.text()).length > 100);
  }
  const missing = await fetch(`${app.url}/assets/nope-12345678.js`);
  assert.equal(missing.status, 404);
  assert.notEqual(missing.headers.get('cache-control'), 'public, max-age=31536000, immutable');

  for (const [method, p] of [
    ['GET', '/api/no-such-endpoint'],
    ['GET', '/api'],
    ['POST', '/api/no/such'],
    ['POST', '/some/page'],
  ] as const) {
    const r = await api(app.url, method, p, { body: method === 'POST' ? {} : undefined });
    assert.equal(r.status, 404, `${method} ${p}`);
    assert.match(r.res.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(r.body, { error: 'Not found' });
  }
  // Existing non-/api endpoints are untouched.
  assert.equal((await fetch(`${app.url}/livez`)).status, 200);
});
