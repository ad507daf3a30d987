// Alerts in a real Chromium on the real API (issue 14 item 2; spec document 2 "Alerts", "Events" 1):
// an alert raised on the server after the page opened appears live (SSE, no reload) with the unread
// badge equal to GET /api/alerts/unread-count; another tenant's alert never shows; mark read, mark all
// read and delete change the API's state and the badge alike.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { api, type Session } from '../support/session.ts';

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
