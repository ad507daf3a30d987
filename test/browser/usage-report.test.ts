// The usage report in a real Chromium on the real API (issue 28 item 2, "Done when"): a manager picks
// "Last week", sorts by total tokens, reads the top user, and downloads the CSV, whose rows and totals
// equal GET /api/usage/report for the same days; the nav offers the report to a manager and not to a
// readonly user (the API refuses them); the dashboard shows the period's estimated cost, equal to
// GET /api/roi. Screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { presetRange } from '../../web/src/pages/reports/report-view.ts';
import { createUser } from '../support/actors.ts';
import { downloadedText, screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { sendOtlp, sumExport } from '../support/otlp.ts';
import { UPLOAD_KEY } from '../support/quota.ts';
import { api, login, type Session } from '../support/session.ts';

let e: Everyday;
let manager: { username: string; password: string; session: Session };
let readonly: { username: string; password: string };
const week = presetRange('lastweek', new Date());
const dayOfWeek = (n: number) =>
  new Date(Date.parse(`${week.start}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

const answer = (sender: string, date: string, model: string, input: number, output: number) => ({
  message_id: randomUUID(),
  date,
  tool_name: 'cli_report',
  host_name: 'report-host',
  sender_name: sender,
  role: 'assistant',
  content: 'answer',
  model,
  input_tokens: input,
  output_tokens: output,
  timestamp: `${date}T10:00:00Z`,
});

before(async () => {
  e = await startEveryday();
  const m = await createUser(e.app, e.admin, { role: 'manager', tenant_id: e.tenant });
  manager = { ...m, session: await login(e.app.url, m.username, m.password) };
  readonly = await createUser(e.app, e.admin, { role: 'readonly', tenant_id: e.tenant });
  const today = new Date().toISOString().slice(0, 10);
  const messages = [
    // Last week: the tenant admin 3 x 1,500 tokens, the user 6,000: the user is last week's top user.
    ...[0, 1, 2].map(() => answer(e.tenantAdmin.username, dayOfWeek(1), 'gpt-4o', 1000, 500)),
    answer(e.user.username, dayOfWeek(2), 'claude-sonnet-4-5', 5000, 1000),
    // This week the tenant admin leads, which "last week" must not show.
    answer(e.tenantAdmin.username, today, 'gpt-4o', 90_000, 10_000),
    // Another tenant's usage is outside the manager's scope.
    answer(e.stranger.username, dayOfWeek(3), 'gpt-4o', 70_000, 0),
  ];
  const r = await api(e.app.url, 'POST', '/api/upload/batch', { headers: UPLOAD_KEY, body: { messages } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
});
after(async () => {
  await e?.close();
});

/** A CSV of plain cells (the report's: no quoted commas in these names) as rows of strings. */
const csvRows = (text: string) =>
  text
    .trim()
    .split('\r\n')
    .map((l) => l.split(','));

test('a manager finds last week’s top user by tokens and downloads the CSV the API agrees with', async () => {
  const { page, errors } = await signedInPage(e, manager, '/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage report' }).click();
  await page.getByRole('heading', { name: 'Usage report' }).waitFor();
  await page.getByLabel('Period').selectOption('lastweek');
  const table = page.getByRole('table', { name: `Usage by user, ${week.start} to ${week.end}` });
  await table.waitFor();

  // Sort by total tokens: the first click turns the order around, the second puts the most first.
  const header = table.getByRole('columnheader', { name: /Total tokens/ });
  await header.getByRole('button').click();
  assert.equal(await header.getAttribute('aria-sort'), 'ascending');
  await header.getByRole('button').click();
  assert.equal(await header.getAttribute('aria-sort'), 'descending');

  const want = (
    await api(
      e.app.url,
      'GET',
      `/api/usage/report?group_by=user&start_date=${week.start}&end_date=${week.end}`,
      { auth: manager.session },
    )
  ).body;
  assert.deepEqual(
    want.rows.map((r: any) => [r.label, r.tokens]),
    [
      [e.user.username, 6000],
      [e.tenantAdmin.username, 4500],
    ],
  );
  const top = table.locator('tbody tr').first();
  assert.equal((await top.getByRole('rowheader').textContent())?.trim(), e.user.username);
  const fmt = (n: number) => page.evaluate((v) => new Intl.NumberFormat().format(v), n);
  assert.equal((await top.getByRole('cell').nth(2).textContent())?.trim(), await fmt(6000));
  // The cost to the API's 4 decimals: Sonnet 4.5, 5,000 x $3 + 1,000 x $15 per million = $0.03;
  // GPT-4o, 3,000 x $2.50 + 1,500 x $10 per million = $0.0225.
  const usd = (n: number) =>
    page.evaluate(
      (v) =>
        new Intl.NumberFormat(undefined, {
          style: 'currency',
          currency: 'USD',
          maximumFractionDigits: 4,
        }).format(v),
      n,
    );
  assert.deepEqual(
    want.rows.map((r: any) => r.cost),
    [0.03, 0.0225],
  );
  const costs = await table
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => tr.lastElementChild?.textContent));
  assert.deepEqual(costs, [await usd(0.03), await usd(0.0225)]);

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click(),
  ]);
  assert.equal(download.suggestedFilename(), `usage-by-user-${week.start}-to-${week.end}.csv`);
  const csv = csvRows(await downloadedText(download));
  const line = (label: string, f: any) =>
    [label, f.input_tokens, f.output_tokens, f.tokens, f.requests, f.cost].map(String);
  assert.deepEqual(csv, [
    ['User', 'Input tokens', 'Output tokens', 'Total tokens', 'Requests', 'Estimated cost (USD)'],
    ...want.rows.map((r: any) => line(r.label, r)),
    line('Total', want.totals),
  ]);

  // Sorted by user name the export follows the screen.
  await table.getByRole('columnheader', { name: /^User/ }).getByRole('button').click();
  const [json] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download JSON' }).click(),
  ]);
  const shown = JSON.parse(await downloadedText(json));
  const byName = [...want.rows].sort((a: any, b: any) => a.label.localeCompare(b.label));
  assert.deepEqual(shown.rows, byName);
  assert.deepEqual(shown.totals, want.totals);

  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'usage-report', 'report-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'usage-report', 'report-390');
  assert.deepEqual(errors, []);
});

test('a readonly user is not offered the report; the dashboard shows the period’s estimated cost', async () => {
  const ro = await signedInPage(e, readonly, '/');
  const refused: string[] = [];
  ro.page.on('response', (r) => {
    if (r.status() === 403) refused.push(new URL(r.url()).pathname);
  });
  await ro.page.reload();
  await ro.page.waitForLoadState('networkidle');
  await ro.page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  const nav = ro.page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Dashboard' }).waitFor();
  assert.equal(await nav.getByRole('link', { name: 'Usage report' }).count(), 0);
  assert.equal(await ro.page.locator('[data-figure="range-cost"]').count(), 0);

  const { page, errors } = await signedInPage(e, e.tenantAdmin, '/');
  const cost = page.locator('[data-figure="range-cost"]');
  await cost.waitFor();
  const caption =
    (await page
      .getByRole('table', { name: /^By tool/ })
      .locator('caption')
      .textContent()) ?? '';
  const [, start, end] = /(\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})/.exec(caption) ?? [];
  const roi = (
    await api(e.app.url, 'GET', `/api/roi?start_date=${start}&end_date=${end}`, {
      auth: e.tenantAdmin.session,
    })
  ).body;
  assert.ok(roi.totals.cost > 0, JSON.stringify(roi.totals));
  const money = await page.evaluate(
    (v) => new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' }).format(v),
    roi.totals.cost,
  );
  assert.equal((await cost.textContent())?.trim(), money);
  assert.deepEqual(errors, []);
  // The dashboard asks nothing of the cost endpoints for a role without view_analysis (its other 403s,
  // e.g. the quota of a role without view_quota, are not this page's part).
  assert.deepEqual(
    refused.filter((p) => p.startsWith('/api/roi') || p.startsWith('/api/usage')),
    [],
  );
});

test('the dashboard shows what the CLIs measured (OpenTelemetry), only what was received', async () => {
  const made = await api(e.app.url, 'POST', '/api/upload-tokens', {
    auth: e.tenantAdmin.session,
    body: { name: 'laptop otel' },
  });
  const now = new Date();
  const start = new Date(now.getTime() - 60_000);
  const lines = sumExport('claude-code', 'claude_code.lines_of_code.count', 1, [
    { attributes: { type: 'added' }, start, at: now, value: 40 },
    { attributes: { type: 'removed' }, start, at: now, value: 5 },
  ]);
  assert.equal((await sendOtlp(e.app.url, 'metrics', lines, { token: made.body.token })).status, 200);
  const { page, errors } = await signedInPage(e, e.tenantAdmin, '/');
  const figure = page.locator('[data-figure="otel-lines"]');
  await figure.waitFor();
  assert.equal((await figure.textContent())?.trim(), '+40 / −5');
  assert.equal(await page.locator('[data-figure="otel-commits"]').count(), 0, 'no commits were reported');
  assert.equal(
    (await page.locator('[data-figure="hours-saved-source"]').textContent())?.trim(),
    'assumed per request',
    'no active time was measured',
  );
  assert.deepEqual(errors, []);
});
