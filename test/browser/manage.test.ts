// The /manage pages in a real Chromium against the real API (issue 14 item 5): a system administrator
// creates a tenant (quota, suspend, activate), a user in it, stores a provider key (the plain key is
// never in the page after saving), creates a machine registration token and copies the install
// one-liner, filters the audit log (figures equal the API's) and follows the export link; filter
// rules, security settings, SSO and compliance pages work; a tenant admin typing a system page in
// reads why it is refused and the API refuses the same calls. Screenshots of every page.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTenant, createUser, uniqueName } from '../support/actors.ts';
import { launchBrowser, newContext, screenshot, scrollsSideways, watchErrors } from '../support/browser.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let browser: Browser;
let admin: Session;

before(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function signIn(page: Page, username: string, password: string) {
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
}

async function adminPage(): Promise<{ ctx: BrowserContext; page: Page; errors: string[] }> {
  const ctx = await newContext(browser, app.url);
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await signIn(page, ADMIN.username, ADMIN.password);
  return { ctx, page, errors };
}

/** Opens a /manage section through its tab and checks the page fits 1280 px. */
async function openSection(page: Page, tab: string, heading = tab) {
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: tab }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  assert.equal(await scrollsSideways(page), false, `${tab}: no horizontal scroll at 1280 px`);
}

const status = (page: Page, text: string | RegExp) =>
  page.getByRole('status').filter({ hasText: text }).waitFor();

test('an admin creates a tenant and a user, stores a key, creates a registration token, filters the audit log', async () => {
  const { page, errors } = await adminPage();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { name: 'Administration', level: 1 }).waitFor();
  await screenshot(page, 'manage', 'overview');

  // Tenants: create, set a quota, suspend (confirmed) and activate again.
  const slug = uniqueName('w4').toLowerCase();
  await openSection(page, 'Tenants');
  await page.getByLabel('Tenant name').fill(`W4 ${slug}`);
  await page.getByLabel('Slug').fill(slug);
  await page.getByLabel('Contact email').fill('ops@example.test');
  await page.getByRole('button', { name: 'Create tenant' }).click();
  await status(page, `Tenant W4 ${slug} created (${slug})`);
  const tenants = (await api(app.url, 'GET', '/api/tenants', { auth: admin })).body.tenants;
  const tenant = tenants.find((t: { slug: string }) => t.slug === slug);
  assert.ok(tenant, 'the tenant exists in the API');
  await page.getByRole('cell', { name: slug, exact: true }).waitFor();
  await screenshot(page, 'manage', 'tenants');

  await page.getByRole('button', { name: `Manage W4 ${slug}` }).click();
  await page.getByLabel('Maximum users').fill('25');
  await page.getByLabel('Daily token limit (tokens)').fill('1,000,000');
  await page.getByRole('button', { name: 'Save quotas' }).click();
  await status(page, `Quotas of W4 ${slug} saved`);
  const detail = (await api(app.url, 'GET', `/api/tenants/${tenant.id}`, { auth: admin })).body.tenant;
  assert.equal(detail.quota.max_users, 25);
  assert.equal(detail.quota.daily_token_limit, 1_000_000);
  // A bad number is caught in words before any request.
  await page.getByLabel('Maximum users').fill('lots');
  await page.getByRole('button', { name: 'Save quotas' }).click();
  await page.getByText('must be a whole number').waitFor();

  await page.getByRole('button', { name: `Suspend W4 ${slug}` }).click();
  await page.getByText(`Suspend W4 ${slug}? Its users can no longer log in.`).waitFor();
  await screenshot(page, 'manage', 'tenant-detail-confirm');
  assert.equal(
    (await api(app.url, 'GET', `/api/tenants/${tenant.id}`, { auth: admin })).body.tenant.status,
    'active',
  );
  await page.getByRole('button', { name: 'Confirm' }).click();
  await status(page, `Tenant W4 ${slug} suspended`);
  assert.equal(
    (await api(app.url, 'GET', `/api/tenants/${tenant.id}`, { auth: admin })).body.tenant.status,
    'suspended',
  );
  await page.getByRole('button', { name: 'Activate' }).click();
  await status(page, `Tenant W4 ${slug} activated`);
  assert.equal(
    (await api(app.url, 'GET', `/api/tenants/${tenant.id}`, { auth: admin })).body.tenant.status,
    'active',
  );

  // Users: create one in the new tenant; the API's password policy answers in words.
  const username = `${slug}-user`;
  await openSection(page, 'Users');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Email').fill(`${username}@example.test`);
  await page.getByLabel('Initial password').fill('short');
  await page.getByLabel('Tenant').selectOption(String(tenant.id));
  await page.getByRole('button', { name: 'Create user' }).click();
  const policy = await api(app.url, 'POST', '/api/admin/users', {
    auth: admin,
    body: { username: `${username}-x`, password: 'short' },
  });
  assert.equal(policy.status, 400);
  await page.getByRole('alert').filter({ hasText: policy.body.error }).waitFor();
  await page.getByLabel('Initial password').fill('a-long-enough-password-1');
  await page.getByRole('button', { name: 'Create user' }).click();
  await status(page, `User ${username} created`);
  const users = (await api(app.url, 'GET', '/api/admin/users', { auth: admin })).body.users;
  const created = users.find((u: { username: string }) => u.username === username);
  assert.equal(created?.tenant_id, tenant.id);
  assert.equal(created?.role, 'user');
  assert.equal(created?.must_change_password, true);
  await page.getByRole('button', { name: `Quota of ${username}` }).click();
  await page.getByLabel('Daily token limit (millions of tokens)').fill('3');
  await page.getByRole('button', { name: 'Save quota' }).click();
  await status(page, `Quota of ${username} saved`);
  const withQuota = (await api(app.url, 'GET', '/api/admin/users', { auth: admin })).body.users.find(
    (u: { id: number }) => u.id === created.id,
  );
  assert.equal(withQuota.daily_token_quota, 3);

  // Edit: role and active state; the panel's heading takes focus when it opens.
  await page.getByRole('button', { name: `Edit ${username}` }).click();
  await page.getByRole('heading', { name: `Edit ${username}` }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'edit-user-h');
  await page
    .getByRole('form', { name: `Edit ${username}` })
    .getByLabel('Role')
    .selectOption('manager');
  await page.getByLabel('Active (may log in)').uncheck();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await status(page, `User ${username} updated`);
  let stored = (await api(app.url, 'GET', '/api/admin/users', { auth: admin })).body.users.find(
    (u: { id: number }) => u.id === created.id,
  );
  assert.equal(stored.role, 'manager');
  assert.equal(stored.is_active, false);
  await page.getByRole('button', { name: `Edit ${username}` }).click();
  await page.getByLabel('Active (may log in)').check();
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  // The status still says "updated" from the first save: wait for this save to close its panel, or its
  // late answer would close the next panel opened.
  await page.getByRole('heading', { name: `Edit ${username}` }).waitFor({ state: 'detached' });
  await status(page, `User ${username} updated`);

  // Reset the password: the new one logs in (and must be changed), the old one no longer does.
  await page.getByRole('button', { name: `Reset password of ${username}` }).click();
  await page.getByLabel('New password').fill('a-reset-password-2345');
  await page.getByRole('button', { name: 'Reset password', exact: true }).click();
  await status(page, `Password of ${username} reset`);
  const relog = await login(app.url, username, 'a-reset-password-2345');
  assert.equal(relog.user.must_change_password, true);
  stored = (
    await api(app.url, 'POST', '/api/auth/login', {
      body: { username, password: 'a-long-enough-password-1' },
    })
  ).status;
  assert.equal(stored, 401);
  await screenshot(page, 'manage', 'users');

  // Provider keys: the plain key goes in once and is never in the page afterwards.
  const plain = `sk-w4-${'z'.repeat(24)}-PLAINSECRET`;
  await openSection(page, 'Provider keys');
  await page.getByLabel('Tenant').selectOption(String(tenant.id));
  await page.getByLabel('Provider', { exact: true }).selectOption('openai');
  await page.getByLabel('Key name').fill('w4-openai');
  await page.getByLabel('API key').fill(plain);
  await page.getByRole('button', { name: 'Store key' }).click();
  await status(page, 'Key w4-openai stored');
  await page.getByRole('cell', { name: 'sk-...CRET' }).waitFor();
  const inPage = await page.evaluate(
    () =>
      document.documentElement.outerHTML +
      [...document.querySelectorAll('input, textarea')].map((e) => (e as HTMLInputElement).value).join('\n'),
  );
  assert.ok(!inPage.includes(plain), 'the plain key is nowhere in the page after saving');
  assert.ok(!inPage.includes('PLAINSECRET'));
  const keys = (await api(app.url, 'GET', `/api/remote/api-keys?tenant_id=${tenant.id}`, { auth: admin }))
    .body.keys;
  assert.equal(keys.length, 1);
  assert.equal(keys[0].masked_key, 'sk-...CRET');
  await screenshot(page, 'manage', 'keys');
  await page.getByRole('button', { name: 'Deactivate w4-openai' }).click();
  await status(page, 'Key w4-openai deactivated');
  const after1 = (await api(app.url, 'GET', `/api/remote/api-keys?tenant_id=${tenant.id}`, { auth: admin }))
    .body.keys;
  assert.equal(after1[0].is_active, false);
  await page.getByRole('button', { name: 'Delete w4-openai' }).click();
  await page.getByText('Delete w4-openai?').waitFor();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await status(page, 'Key w4-openai deleted');
  assert.deepEqual(
    (await api(app.url, 'GET', `/api/remote/api-keys?tenant_id=${tenant.id}`, { auth: admin })).body.keys,
    [],
  );

  // Machines: a registration token, shown once with the install one-liner, copied to the clipboard.
  await openSection(page, 'Machines');
  await page.getByLabel('Tenant').selectOption(String(tenant.id));
  await page.getByRole('button', { name: 'Create registration token' }).click();
  const box = page.locator('.secret-once');
  await box.waitFor();
  const oneLiner = (await box.locator('pre').first().textContent()) ?? '';
  const m =
    /^curl -fsSL (\S+)\/api\/remote\/agent\/install\.sh \| bash -s -- --server (\S+) --token (\S+) --insecure$/.exec(
      oneLiner,
    );
  assert.ok(m, oneLiner);
  assert.equal(m[1], app.url);
  assert.equal(m[2], app.url);
  const tokens = (await api(app.url, 'GET', '/api/remote/machines/registration-tokens', { auth: admin })).body
    .tokens;
  const mine = tokens.filter((t: { tenant_id: number }) => t.tenant_id === tenant.id);
  assert.equal(mine.length, 1);
  assert.equal(mine[0].status, 'unused');
  // The installer the one-liner downloads exists and names this server.
  const script = await fetch(`${m[1]}/api/remote/agent/install.sh`);
  assert.equal(script.status, 200);
  await page.getByRole('button', { name: 'Copy install command', exact: true }).click();
  await box.getByText('Copied').waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), oneLiner);
  await screenshot(page, 'manage', 'machines-token');
  await page.getByRole('button', { name: 'Done, hide the token' }).click();
  await box.waitFor({ state: 'detached' });
  assert.ok(!(await page.content()).includes(m[3]!), 'the token is gone from the page once hidden');
  await page.getByRole('button', { name: `Revoke token ${mine[0].id}` }).click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await status(page, `Token ${mine[0].id} revoked`);
  const revoked = (await api(app.url, 'GET', '/api/remote/machines/registration-tokens', { auth: admin }))
    .body.tokens;
  assert.equal(revoked.find((t: { id: number }) => t.id === mine[0].id).status, 'revoked');
  await screenshot(page, 'manage', 'machines');

  // Audit log: filter by action; the page shows what the API answers for the same filter.
  await openSection(page, 'Audit log');
  await page.getByLabel('Action').fill('TENANT_SUSPEND');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const expected = (await api(app.url, 'GET', '/api/audit/logs?action=TENANT_SUSPEND', { auth: admin })).body;
  assert.equal(expected.total, 1);
  await page.getByText(`Records 1–1 of 1`).waitFor();
  const rows = page.locator('table tbody tr');
  assert.equal(await rows.count(), 1);
  assert.match((await rows.first().textContent()) ?? '', /TENANT_SUSPEND/);
  assert.match((await rows.first().textContent()) ?? '', /admin/);
  await page.getByLabel('Action').fill('NO_SUCH_ACTION');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('No audit record matches these filters.').waitFor();
  await page.getByLabel('From').fill('2999-01-02');
  await page.getByLabel('To').fill('2999-01-01');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('alert').filter({ hasText: 'From must not be after To' }).waitFor();
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.getByLabel('Action').fill('USER_CREATE');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('cell', { name: 'USER_CREATE' }).first().waitFor();
  await screenshot(page, 'manage', 'audit');
  const csvHref = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
  assert.equal(csvHref, '/api/audit/logs/export?format=csv');
  const download = await page.request.get(csvHref!);
  assert.equal(download.status(), 200);
  assert.match(download.headers()['content-disposition'] ?? '', /attachment; filename="audit-logs-.*\.csv"/);
  const csv = await download.text();
  assert.match(csv, /^id,timestamp,user_id/);
  assert.match(csv, /TENANT_SUSPEND/);
  assert.ok(!csv.includes(plain) && !csv.includes(m[3]!), 'no secret in the exported audit log');
  const jsonHref = await page.getByRole('link', { name: 'Export JSON' }).getAttribute('href');
  assert.equal((await (await page.request.get(jsonHref!)).json()).count > 0, true);

  // No secret reached a log line.
  const logText = app.logs.join('\n');
  assert.ok(logText.length > 0, 'the harness captured the logs');
  for (const secret of [plain, m[3]!]) assert.ok(!logText.includes(secret), 'no secret in the logs');
  assert.deepEqual(
    errors.filter((e) => !/status of 400/.test(e)),
    [],
    'no console errors besides the expected 400 of the password policy',
  );
  await page.context().close();
});

test('filter rules, security settings, single sign-on and compliance pages', async () => {
  const { page, errors } = await adminPage();
  await page.goto('/manage/filters');
  await page.getByRole('heading', { name: 'Filter rules', level: 1 }).waitFor();
  // An invalid RE2 pattern comes back as the API's 400 in words.
  await page.getByLabel('Pattern').fill('(unclosed');
  await page.getByLabel('Type').selectOption('regex');
  await page.getByRole('button', { name: 'Add rule' }).click();
  const bad = await api(app.url, 'POST', '/api/filter-rules', {
    auth: admin,
    body: { pattern: '(unclosed', type: 'regex' },
  });
  assert.equal(bad.status, 400);
  await page.getByRole('alert').filter({ hasText: bad.body.error }).waitFor();
  await page.getByLabel('Pattern').fill('w4-forbidden-word');
  await page.getByLabel('Type').selectOption('keyword');
  await page.getByLabel('Action').selectOption('block');
  await page.getByRole('button', { name: 'Add rule' }).click();
  await status(page, 'Rule "w4-forbidden-word" added');
  const rule = (await api(app.url, 'GET', '/api/filter-rules', { auth: admin })).body.rules.find(
    (r: { pattern: string }) => r.pattern === 'w4-forbidden-word',
  );
  assert.equal(rule.action, 'block');
  assert.equal(rule.is_enabled, true);
  await page.getByRole('button', { name: 'Disable rule w4-forbidden-word' }).click();
  await status(page, 'Rule "w4-forbidden-word" disabled');
  assert.equal(
    (await api(app.url, 'GET', '/api/filter-rules', { auth: admin })).body.rules.find(
      (r: { id: number }) => r.id === rule.id,
    ).is_enabled,
    false,
  );
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'manage', 'filters');
  await page.getByRole('button', { name: 'Delete rule w4-forbidden-word' }).click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await status(page, 'Rule "w4-forbidden-word" deleted');
  assert.ok(
    !(await api(app.url, 'GET', '/api/filter-rules', { auth: admin })).body.rules.some(
      (r: { id: number }) => r.id === rule.id,
    ),
  );

  await openSection(page, 'Security settings');
  const before = (await api(app.url, 'GET', '/api/security-settings', { auth: admin })).body.settings;
  await page.getByLabel('Lockout (minutes)').fill(String(before.login_lockout_minutes + 1));
  await page.getByRole('button', { name: 'Save settings' }).click();
  await status(page, 'Security settings saved');
  const now = (await api(app.url, 'GET', '/api/security-settings', { auth: admin })).body.settings;
  assert.equal(now.login_lockout_minutes, before.login_lockout_minutes + 1);
  assert.equal(now.password_min_length, before.password_min_length);
  await page.getByLabel('Minimum password length').fill('3');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('must be at least 8').waitFor();
  await screenshot(page, 'manage', 'security');

  await openSection(page, 'Single sign-on');
  await page.getByText('No identity provider is registered.').waitFor();
  const secret = 'w4-client-secret-DO-NOT-SHOW';
  await page.getByLabel('Name').fill('w4-oidc');
  await page.getByLabel('Client id').fill('w4-client');
  await page.getByLabel('Client secret').fill(secret);
  await page.getByLabel('Redirect URI').fill(`${app.url}/api/sso/callback/w4-oidc`);
  await page.getByLabel('Issuer URL').fill('https://idp.example.test');
  await page.getByRole('button', { name: 'Register provider' }).click();
  await status(page, 'Provider w4-oidc registered');
  await page.getByRole('cell', { name: '/api/sso/login/w4-oidc' }).waitFor();
  const html = await page.evaluate(
    () =>
      document.documentElement.outerHTML +
      [...document.querySelectorAll('input')].map((e) => (e as HTMLInputElement).value).join('\n'),
  );
  assert.ok(!html.includes(secret), 'the client secret is not in the page after registering');
  await screenshot(page, 'manage', 'sso');
  await page.getByRole('button', { name: 'Disable w4-oidc' }).click();
  await page.getByRole('button', { name: 'Confirm' }).click();
  await status(page, 'Provider w4-oidc disabled');
  assert.deepEqual((await api(app.url, 'GET', '/api/sso/providers', { auth: admin })).body.providers, []);
  assert.ok(!app.logs.join('\n').includes(secret), 'the client secret is not in the logs');

  await openSection(page, 'Compliance');
  const score = (await api(app.url, 'GET', '/api/compliance/audit/security-score', { auth: admin })).body;
  await page.getByText(`${score.score} / 100`).waitFor();
  await page.getByLabel('Report', { exact: true }).selectOption('audit_activity');
  await page.getByRole('button', { name: 'Generate report' }).click();
  await page.getByRole('heading', { name: 'Generated report' }).waitFor();
  const saved = (await api(app.url, 'GET', '/api/compliance/reports/saved', { auth: admin })).body.reports;
  assert.equal(saved.length, 1);
  assert.equal(saved[0].report_type, 'audit_activity');
  await page.getByText(saved[0].report_id).first().waitFor();
  await screenshot(page, 'manage', 'compliance');
  assert.deepEqual(
    errors.filter((e) => !/status of 400/.test(e)),
    [],
    'no console errors besides the expected 400 of the bad pattern',
  );
  await page.context().close();
});

test('a page a tenant admin may not open is not offered and says so in words; the API refuses the same calls', async () => {
  const tenant = await createTenant(app, admin);
  const u = await createUser(app, admin, { role: 'tenant_admin', tenant_id: tenant });
  const ctx = await newContext(browser, app.url);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await signIn(page, u.username, u.password);
  await page.goto('/manage/tenants');
  await page.getByRole('heading', { name: 'Not available to you', level: 1 }).waitFor();
  await page.getByRole('alert').getByText('Your role does not give access to this page').waitFor();
  assert.equal(new URL(page.url()).pathname, '/manage/tenants', 'the address stays: the user sees why');
  const tabs = page.getByRole('navigation', { name: 'Administration' });
  assert.equal(await tabs.count(), 0, 'no administration tabs on a refused page');
  await screenshot(page, 'manage', 'refused-tenant-admin');
  assert.deepEqual(errors, []);
  const s = await login(app.url, u.username, u.password);
  for (const [method, path] of [
    ['GET', '/api/tenants'],
    ['POST', '/api/tenants'],
    ['GET', '/api/security-settings'],
    ['GET', '/api/remote/api-keys'],
    ['GET', '/api/remote/machines/registration-tokens'],
    ['POST', '/api/remote/machines/register'],
  ] as const) {
    const r = await api(app.url, method, path, {
      auth: s,
      body: method === 'POST' ? { tenant_id: tenant } : undefined,
    });
    assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.body)}`);
  }
  await ctx.close();
});
