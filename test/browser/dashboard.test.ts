// The dashboard in a real Chromium on the real API (issue 14 item 2): usage uploaded through the API,
// then every figure on the page equals what the API answers the same user (all-time totals from
// GET /api/summary, the period's by-tool figures from GET /api/range, quota bars from
// GET /api/quota/status); the chart draws; the by-user table is for administrators only and matches
// GET /api/analysis/user-ranking; a user of another tenant sees their own (zero) figures.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { quotaBars } from '../../web/src/pages/dashboard/figures.ts';
import { screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, shownAndExpected, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { setUserQuota, uploadRequests } from '../support/quota.ts';
import { api } from '../support/session.ts';

let e: Everyday;

before(async () => {
  e = await startEveryday();
  await uploadRequests(e.app, e.user.username, 4, 1234);
  await uploadRequests(e.app, e.tenantAdmin.username, 1, 250);
  await setUserQuota(e.app, e.admin, e.user.id, { daily_request_quota: 100, daily_token_quota: 1 });
});
after(async () => {
  await e?.close();
});

test('a user’s dashboard shows the API’s own figures: totals, by tool, quota; no by-user table', async () => {
  const summary = (await api(e.app.url, 'GET', '/api/summary', { auth: e.user.session })).body;
  assert.ok(summary.total_tokens >= 4936, JSON.stringify(summary));
  const { page, errors } = await signedInPage(e, e.user, '/');
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  await page.locator('[data-figure="total-tokens"]').waitFor();
  for (const [sel, n] of [
    ['[data-figure="total-tokens"]', summary.total_tokens],
    ['[data-figure="total-requests"]', summary.total_requests],
    ['[data-figure="input-tokens"]', summary.total_input_tokens],
  ] as const) {
    const { shown, expected } = await shownAndExpected(page, sel, n);
    assert.equal(shown, expected, sel);
  }
  assert.match((await page.locator('[data-figure="total-tokens"]').textContent()) ?? '', /\d[^\d]\d{3}/);

  // The period's by-tool table equals GET /api/range of the same days.
  const byTool = page.getByRole('table', { name: /^By tool/ });
  await byTool.waitFor();
  const caption = (await byTool.locator('caption').textContent()) ?? '';
  const [, start, end] = /(\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})/.exec(caption) ?? [];
  const range = (
    await api(e.app.url, 'GET', `/api/range?start=${start}&end=${end}`, { auth: e.user.session })
  ).body;
  const tool = range.tools.find((t: { tool_name: string }) => t.tool_name === 'cli_quota');
  const row = byTool.getByRole('row', { name: /cli_quota/ });
  const cells = await row.getByRole('cell').allTextContents();
  const fmt = (n: number) => page.evaluate((v) => new Intl.NumberFormat().format(v), n);
  assert.equal(cells[1], await fmt(tool.tokens));
  assert.equal(cells[4], await fmt(tool.requests));
  assert.ok((await page.locator('.usage-chart canvas').count()) >= 1, 'the chart is drawn');

  // Quota bars equal GET /api/quota/status.
  const quota = (await api(e.app.url, 'GET', '/api/quota/status?period=daily', { auth: e.user.session }))
    .body;
  const bar = page.locator('.quota-bar', { hasText: 'Your requests today' });
  await bar.waitFor();
  assert.equal(
    (await bar.locator('.quota-figures').textContent())?.trim(),
    `${await fmt(quota.user.requests_used)} of ${await fmt(quota.user.request_limit)}`,
  );
  assert.equal(Number(await bar.getByRole('progressbar').getAttribute('value')), quota.user.requests_used);
  assert.equal(await page.getByRole('heading', { name: 'By user' }).count(), 0, 'no by-user table for users');

  // Another period: the chart and tables follow.
  await page.getByLabel('Period').selectOption('30');
  await page.getByText(/^By tool, \d{4}-\d{2}-\d{2} to/).waitFor();
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'dashboard', 'user');
  assert.deepEqual(errors, []);
});

test('an administrator of the tenant sees the by-user table, equal to the API’s ranking', async () => {
  const ranking = (
    await api(e.app.url, 'GET', '/api/analysis/user-ranking?limit=20', { auth: e.tenantAdmin.session })
  ).body;
  const mine = ranking.ranking.find((u: { username: string }) => u.username === e.user.username);
  assert.ok(mine, JSON.stringify(ranking));
  const { page, errors } = await signedInPage(e, e.tenantAdmin, '/');
  const table = page.getByRole('table', { name: /^Top users/ });
  await table.waitFor();
  const cells = await table
    .getByRole('row', { name: new RegExp(e.user.username) })
    .getByRole('cell')
    .allTextContents();
  assert.equal(cells[2], await page.evaluate((v) => new Intl.NumberFormat().format(v), mine.tokens));
  assert.equal(cells[3], String(mine.requests));
  assert.equal(await table.getByRole('row', { name: new RegExp(e.stranger.username) }).count(), 0);
  // The quota section shows one bar per limited dimension of GET /api/quota/status (or says none).
  const statuses = await Promise.all(
    ['daily', 'monthly'].map(
      async (p) =>
        (await api(e.app.url, 'GET', `/api/quota/status?period=${p}`, { auth: e.tenantAdmin.session })).body,
    ),
  );
  const bars = statuses.flatMap(quotaBars);
  if (bars.length === 0) await page.getByText('No quota limits apply to you.').waitFor();
  else
    await page
      .locator('.quota-bar')
      .nth(bars.length - 1)
      .waitFor();
  assert.equal(await page.locator('.quota-bar').count(), bars.length);
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'dashboard', 'tenant-admin');
  assert.deepEqual(errors, []);
});

test('a user of another tenant sees only their own tenant’s (empty) figures', async () => {
  const summary = (await api(e.app.url, 'GET', '/api/summary', { auth: e.stranger.session })).body;
  assert.equal(summary.total_tokens, 0);
  const { page } = await signedInPage(e, e.stranger, '/');
  // Nothing recorded for their tenant: the first-run steps instead of zero totals (issue 28 item 6),
  // and nothing of the other tenant's figures.
  await page.locator('[data-first-run="true"]').waitFor();
  assert.equal(await page.locator('[data-figure="total-tokens"]').count(), 0);
  await page
    .getByRole('table', { name: /^By tool/ })
    .getByText('No usage in this period.')
    .waitFor();
});
