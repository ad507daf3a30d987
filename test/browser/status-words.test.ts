// Honest status words in a real Chromium (issue 28 item 5): a user at 156 % of the daily token quota
// sees "156%" on a full bar in the over-limit style, the exceeded limits in words ("User daily
// tokens", not `user_daily_tokens`), and the administrator's tenant list calls the tenant past its
// limit "over quota" rather than "active". Figures come from the real upload and quota APIs.
// Screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { ADMIN } from '../support/harness.ts';
import { setUserQuota, uploadRequests } from '../support/quota.ts';
import { api } from '../support/session.ts';

let e: Everyday;

before(async () => {
  e = await startEveryday();
  // Usage first: an upload is a report of what was used, the limits come after.
  await uploadRequests(e.app, e.user.username, 1, 1_560_000);
  // 1 million tokens a day (user quotas are in millions), and the same limit for the tenant.
  await setUserQuota(e.app, e.admin, e.user.id, { daily_token_quota: 1 });
  const q = await api(e.app.url, 'PUT', `/api/tenants/${e.tenant}/quota`, {
    auth: e.admin,
    body: { daily_token_limit: 1_000_000 },
  });
  assert.equal(q.status, 200, JSON.stringify(q.body));
});
after(async () => {
  await e?.close();
});

test('a quota bar at 156 % says 156% in the over-limit style; exceeded limits in words; the tenant is "over quota"', async () => {
  const status = (await api(e.app.url, 'GET', '/api/quota/status?period=daily', { auth: e.user.session }))
    .body;
  assert.equal(status.user.tokens_used, 1_560_000, JSON.stringify(status));
  assert.ok(status.exceeded.includes('user_daily_tokens'), JSON.stringify(status.exceeded));

  const { page, errors } = await signedInPage(e, e.user, '/');
  const bar = page.locator('.quota-bar', { hasText: 'Your tokens today' });
  await bar.waitFor();
  assert.equal((await bar.locator('.progress-value').textContent())?.trim(), '156%');
  assert.equal(await bar.locator('.progress').getAttribute('class'), 'progress over-limit');
  await bar.getByText('over the limit').waitFor();
  const progress = bar.getByRole('progressbar');
  assert.equal(await progress.getAttribute('value'), await progress.getAttribute('max'), 'drawn full');
  const notice = page.locator('.notice', { hasText: 'Quota exceeded' });
  await notice.getByText(/User daily tokens/).waitFor();
  assert.ok(!(await notice.textContent())?.includes('_'), 'no codes in the notice');
  await screenshot(page, 'status-words', 'dashboard-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'status-words', 'dashboard-390');
  assert.deepEqual(errors, []);

  const all = (await api(e.app.url, 'GET', '/api/quota/status/all', { auth: e.admin })).body;
  const mine = all.tenants.find((t: { tenant_id: number }) => t.tenant_id === e.tenant);
  assert.ok(mine?.exceeded.includes('tenant_daily_tokens'), JSON.stringify(mine));
  const admin = await signedInPage(e, ADMIN, '/manage/tenants');
  const row = admin.page
    .getByRole('row')
    .filter({ has: admin.page.getByText(String(mine.name), { exact: true }) });
  await row.getByText('over quota', { exact: true }).waitFor();
  assert.equal(await row.getByText('active', { exact: true }).count(), 0);
  await screenshot(admin.page, 'status-words', 'tenants-1280');
  assert.deepEqual(admin.errors, []);
});
