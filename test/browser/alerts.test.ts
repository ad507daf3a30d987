// Alerts in a real Chromium on the real API (issue 14 item 2; spec document 2 "Alerts", "Events" 1):
// an alert raised on the server after the page opened appears live (SSE, no reload) with the unread
// badge equal to GET /api/alerts/unread-count; another tenant's alert never shows; mark read, mark all
// read and delete change the API's state and the badge alike. The navigation's unread badge (on every
// page of the shell) follows new alerts live and clears after read-all; the notification preferences
// are edited on the page and saved through the API (errors in words, the webhook secret never shown).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { createUser } from '../support/actors.ts';
import { newContext, screenshot, scrollsSideways, watchErrors } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { api, login, type Session } from '../support/session.ts';

let e: Everyday;

before(async () => {
  e = await startEveryday();
});
after(async () => {
  await e?.close();
});

const unread = async (s: Session) =>
  (await api(e.app.url, 'GET', '/api/alerts/unread-count', { auth: s })).body.unread_count as number;

test('a new alert appears live with the badge; mark read, read all and delete follow the API', async () => {
  const { page, errors } = await signedInPage(e, e.user, '/alerts');
  await page.getByText('No alerts.').waitFor();
  await page.getByText('Live', { exact: true }).waitFor();
  await page.evaluate(() => {
    (window as unknown as { notReloaded: boolean }).notReloaded = true;
  });

  const raise = (
    who: { id: number },
    tenant: number,
    title: string,
    severity: 'critical' | 'warning' = 'critical',
  ) =>
    raiseAlert(e.app.database, {
      alertType: 'security',
      severity,
      title,
      message: `Details of ${title}`,
      userId: who.id,
      tenantId: tenant,
    });
  const strangerTenant = e.stranger.session.user.tenant_id!;
  await raise(e.stranger, strangerTenant, 'Someone else’s alert');
  await raise(e.user, e.tenant, 'Repeated login failures');
  await page.getByText('Repeated login failures', { exact: true }).waitFor();
  await raise(e.user, e.tenant, 'Unusual token use', 'warning');
  await page.getByText('Unusual token use', { exact: true }).waitFor();
  assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true);
  assert.equal(await page.getByText('Someone else’s alert', { exact: true }).count(), 0);
  assert.equal(await unread(e.user.session), 2);
  const badge = page.locator('.badge');
  assert.equal((await badge.textContent())?.trim(), '2 unread');
  const titles = await page.locator('.alert-title strong').allTextContents();
  assert.deepEqual(titles, ['Unusual token use', 'Repeated login failures'], 'newest first');
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'alerts', 'live');

  await page.getByRole('button', { name: 'Mark “Repeated login failures” read' }).click();
  await page.locator('.badge', { hasText: '1 unread' }).waitFor();
  assert.equal(await unread(e.user.session), 1);

  await page.getByRole('button', { name: 'Mark all read' }).click();
  await page.locator('.badge', { hasText: '0 unread' }).waitFor();
  assert.equal(await unread(e.user.session), 0);

  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete “Unusual token use”' }).click();
  await page.locator('.alert-title', { hasText: 'Unusual token use' }).waitFor({ state: 'detached' });
  const list = (await api(e.app.url, 'GET', '/api/alerts', { auth: e.user.session })).body;
  assert.deepEqual(
    list.alerts.map((a: { title: string }) => a.title),
    ['Repeated login failures'],
  );

  // Filters ask the API: critical only keeps the remaining critical alert, unread only shows none.
  await page.getByLabel('Severity').selectOption('warning');
  await page.getByText('No alerts.').waitFor();
  await page.getByLabel('Severity').selectOption('critical');
  await page.getByText('Repeated login failures', { exact: true }).waitFor();
  await page.getByLabel('Unread only').check();
  await page.getByText('No alerts.').waitFor();
  await screenshot(page, 'alerts', 'filtered');
  assert.deepEqual(errors, []);
});

test('the other tenant’s user sees only their own alert, with their own badge', async () => {
  const { page } = await signedInPage(e, e.stranger, '/alerts');
  await page.getByText('Someone else’s alert', { exact: true }).waitFor();
  assert.equal(await page.getByText('Repeated login failures', { exact: true }).count(), 0);
  assert.equal(
    (await page.locator('.badge').textContent())?.trim(),
    `${await unread(e.stranger.session)} unread`,
  );
});

const navBadge = (page: import('playwright-core').Page) =>
  page.getByRole('navigation', { name: 'Main' }).locator('.nav-badge');

test('the nav badge counts new alerts live on any page and clears after read-all', async () => {
  const u = await createUser(e.app, e.admin, { role: 'user', tenant_id: e.tenant });
  const { page, errors } = await signedInPage(e, u, '/');
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  // Give the shell's stream time to open: the badge must come from the live event, not a reload.
  await page.waitForLoadState('networkidle');
  assert.equal(await navBadge(page).count(), 0, 'no badge without unread alerts');
  await page.evaluate(() => {
    (window as unknown as { notReloaded: boolean }).notReloaded = true;
  });
  const raise = (userId: number, tenantId: number, title: string) =>
    raiseAlert(e.app.database, {
      alertType: 'security',
      severity: 'critical',
      title,
      message: null,
      userId,
      tenantId,
    });

  await raise(u.id, e.tenant, 'First for the badge');
  const alertsLink = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Alerts/ });
  await alertsLink.getByRole('status', { name: '1 unread alert' }).waitFor();
  assert.equal((await navBadge(page).textContent())?.trim(), '1');

  // Another page of the shell (client-side navigation): the badge stays and keeps counting; another
  // tenant's alert and a colleague's alert do not count.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Prompts' }).click();
  await page
    .getByRole('heading', { name: /Prompt/ })
    .first()
    .waitFor();
  await raise(e.stranger.id, e.stranger.session.user.tenant_id!, 'Not for this badge');
  await raise(e.user.id, e.tenant, 'A colleague’s alert');
  await raise(u.id, e.tenant, 'Second for the badge');
  await alertsLink.getByRole('status', { name: '2 unread alerts' }).waitFor();
  const session = await login(e.app.url, u.username, u.password);
  assert.equal(await unread(session), 2);
  // The recount after the live +1 settles on the API's figure (not 3 or 4).
  await page.waitForTimeout(1000);
  assert.equal((await navBadge(page).textContent())?.trim(), '2');
  assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true);
  await screenshot(page, 'alerts', 'nav-badge');

  // Reading one on the alerts page lowers the nav badge; read-all clears it.
  await alertsLink.click();
  await page.getByText('First for the badge', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Mark “First for the badge” read' }).click();
  await alertsLink.getByRole('status', { name: '1 unread alert' }).waitFor();
  await page.getByRole('button', { name: 'Mark all read' }).click();
  await navBadge(page).waitFor({ state: 'detached' });
  assert.equal(await unread(session), 0);

  // Read elsewhere (the API, another tab): the badge catches up when this tab is shown again.
  await raise(u.id, e.tenant, 'Third for the badge');
  await alertsLink.getByRole('status', { name: '1 unread alert' }).waitFor();
  await api(e.app.url, 'POST', '/api/alerts/read-all', { auth: session });
  await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
  await navBadge(page).waitFor({ state: 'detached' });
  assert.deepEqual(errors, []);
});

test('two tabs of one user share one alerts stream; the other tab takes it over when the first closes', async () => {
  const u = await createUser(e.app, e.admin, { role: 'user', tenant_id: e.tenant });
  // Every stream request of the context is counted, from the sign-in on.
  const ctx = await newContext(e.browser, e.app.url);
  const streams: string[] = [];
  ctx.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/alerts/stream') streams.push(r.url());
  });
  const first = await ctx.newPage();
  const errors = watchErrors(first);
  await first.goto('/login');
  await first.getByLabel('Username').fill(u.username);
  await first.getByLabel('Password', { exact: true }).fill(u.password);
  await first.getByRole('button', { name: 'Sign in' }).click();
  await first.getByRole('heading', { name: 'Dashboard' }).waitFor();
  // The shell opens the stream after sign-in; wait for it (a fixed 300 ms was short under load).
  for (let i = 0; streams.length === 0 && i < 150; i++) await first.waitForTimeout(100);
  assert.equal(streams.length, 1, 'the first tab opened the stream');
  const second = await ctx.newPage();
  await second.goto('/alerts');
  await second.getByText('Live', { exact: true }).waitFor();
  const raise = (title: string) =>
    raiseAlert(e.app.database, {
      alertType: 'security',
      severity: 'critical',
      title,
      message: null,
      userId: u.id,
      tenantId: e.tenant,
    });
  await raise('Seen by both tabs');
  const badgeOf = (p: import('playwright-core').Page, label: string) =>
    p.getByRole('navigation', { name: 'Main' }).getByRole('status', { name: label });
  await badgeOf(first, '1 unread alert').waitFor();
  await badgeOf(second, '1 unread alert').waitFor();
  await second.getByText('Seen by both tabs', { exact: true }).waitFor();
  assert.equal(streams.length, 1, `one stream for two tabs: ${streams.join(', ')}`);

  await first.close();
  await raise('After the hand-over');
  await second.getByText('After the hand-over', { exact: true }).waitFor();
  await badgeOf(second, '2 unread alerts').waitFor();
  assert.equal(streams.length, 2, 'the remaining tab opened the stream once');
  assert.deepEqual(errors, []);
});

test('notification preferences: loaded from the API, saved with PUT, errors in words, no secret shown', async () => {
  const who = e.tenantAdmin;
  const prefs = async () =>
    (await api(e.app.url, 'GET', '/api/alerts/preferences', { auth: who.session })).body;
  const before = await prefs();
  assert.equal(before.email_enabled, true);
  assert.equal(before.min_severity, 'warning');

  const { page, errors } = await signedInPage(e, who, '/alerts');
  await page.getByText('Notification preferences').click();
  const form = page.getByRole('form', { name: 'Alert preferences' });
  await form.getByLabel('Lowest severity to show').waitFor();
  assert.equal(await form.getByLabel('Lowest severity to show').inputValue(), 'warning');
  assert.equal(await form.getByLabel('Email me alerts').isChecked(), true);
  const save = form.getByRole('button', { name: 'Save preferences' });
  assert.equal(await save.isDisabled(), true, 'nothing to save before a change');

  await form.getByLabel('Lowest severity to show').selectOption('critical');
  await form.getByLabel('Email me alerts').uncheck();
  await form.getByText('Unsaved changes').waitFor();
  await save.click();
  await form.getByText('Saved', { exact: true }).waitFor();
  const after = await prefs();
  assert.equal(after.min_severity, 'critical');
  assert.equal(after.email_enabled, false);
  assert.equal(after.push_enabled, true, 'a field not changed is left as it was');

  // A webhook the egress policy refuses: the API's 400 in words, nothing stored.
  await form.getByLabel('Webhook URL').fill('http://127.0.0.1:9/hook');
  await save.click();
  await form
    .getByRole('alert')
    .getByText(/webhook_url/)
    .waitFor();
  assert.equal((await prefs()).webhook_url, null);

  // A good one with a signing secret: stored, shown back without the secret.
  const secret = 'robot-secret-do-not-show-8f3a';
  await form
    .getByLabel('Webhook URL')
    .fill(`https://hooks.example.com/robot/send?svc_robot_secret=${secret}`);
  await save.click();
  await form.getByText('Saved', { exact: true }).waitFor();
  const withHook = await prefs();
  assert.equal(withHook.has_secret, true);
  assert.equal(withHook.webhook_url, 'https://hooks.example.com/robot/send');
  await form.getByText('A signing secret is stored.', { exact: false }).waitFor();
  assert.equal(await form.getByLabel('Webhook URL').inputValue(), 'https://hooks.example.com/robot/send');
  assert.ok(!(await page.content()).includes(secret), 'the secret is not in the page');
  assert.ok(!e.app.logs.join('\n').includes(secret), 'the secret is not in the server logs');
  const [stored] = await e.app.database.sql.query<{ webhook_secret_encrypted: string | null }>(
    'SELECT webhook_secret_encrypted FROM notification_preferences WHERE user_id = ?',
    [who.id],
  );
  assert.ok(stored?.webhook_secret_encrypted, 'a secret is stored');
  assert.ok(!JSON.stringify(stored).includes(secret), 'the secret is stored only as ciphertext');
  await screenshot(page, 'alerts', 'preferences');

  // Emptied: the webhook is removed.
  await form.getByLabel('Webhook URL').fill('');
  await save.click();
  await form.getByText('Saved', { exact: true }).waitFor();
  assert.equal((await prefs()).webhook_url, null);

  // Another user's preferences are untouched.
  const others = (await api(e.app.url, 'GET', '/api/alerts/preferences', { auth: e.user.session })).body;
  assert.equal(others.min_severity, 'warning');
  assert.deepEqual(
    errors.filter((m) => !/status of 400/.test(m)),
    [],
    'only the expected 400 was logged by the browser',
  );
});
