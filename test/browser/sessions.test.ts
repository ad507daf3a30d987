// Workspace sessions in a real Chromium on the real API (issue 14 item 2): the list with the totals of
// GET /api/sessions/stats, a status filter, the detail with its messages oldest first, Complete and
// Delete acting on the API; a colleague and another tenant's user get the API's 404 in words, the
// tenant's administrator sees the session in the list.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createUser } from '../support/actors.ts';
import { screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { api } from '../support/session.ts';

let e: Everyday;
let sessionId: string;

before(async () => {
  e = await startEveryday();
  const created = await api(e.app.url, 'POST', '/api/sessions', {
    auth: e.user.session,
    body: { tool_name: 'claude', title: 'Refactor the parser', project_path: '/home/dev/parser' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  sessionId = created.body.session.session_id;
  for (const [role, content, tokens_used] of [
    ['user', 'Split the tokenizer out of parse.ts', 0],
    ['assistant', 'Done: tokenizer.ts holds it now.\nTests pass.', 2345],
  ] as const) {
    const r = await api(e.app.url, 'POST', `/api/sessions/${sessionId}/messages`, {
      auth: e.user.session,
      body: { role, content, tokens_used },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
});
after(async () => {
  await e?.close();
});

test('list with the API’s totals, detail with messages, complete and delete', async () => {
  const stats = (await api(e.app.url, 'GET', '/api/sessions/stats', { auth: e.user.session })).body;
  const { page, errors } = await signedInPage(e, e.user, '/sessions');
  const totals = page.locator('.session-stats');
  await totals.waitFor();
  const fmt = (n: number) => page.evaluate((v) => new Intl.NumberFormat().format(v), n);
  assert.equal(
    await totals.locator('div', { hasText: 'Tokens' }).locator('dd').textContent(),
    await fmt(stats.total_tokens),
  );
  assert.equal(
    await totals.locator('div', { hasText: 'Active' }).locator('dd').textContent(),
    String(stats.active_sessions),
  );
  await page.getByRole('link', { name: 'Refactor the parser' }).waitFor();
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'sessions', 'list');

  await page.getByLabel('Status').selectOption('completed');
  await page.getByText('No session matches.').waitFor();
  await page.getByLabel('Status').selectOption('active');
  await page.getByRole('link', { name: 'Refactor the parser' }).click();
  await page.waitForURL(`**/sessions/${sessionId}`);
  const messages = page.getByRole('list', { name: 'Messages, oldest first' });
  await messages.waitFor();
  const items = await messages.getByRole('listitem').allTextContents();
  assert.equal(items.length, 2);
  assert.match(items[0] ?? '', /Split the tokenizer/);
  assert.match(items[1] ?? '', /2,345 tokens|2.345 tokens/);
  await screenshot(page, 'sessions', 'detail');

  await page.getByRole('button', { name: 'Complete session' }).click();
  await page.locator('.facts dd', { hasText: 'Completed' }).waitFor();
  assert.equal(
    (await api(e.app.url, 'GET', `/api/sessions/${sessionId}`, { auth: e.user.session })).body.session.status,
    'completed',
  );
  assert.equal(await page.getByRole('button', { name: 'Complete session' }).count(), 0);
  assert.deepEqual(errors, []);
});

test('the tenant admin sees it; a colleague and another tenant get the API’s 404 in words', async () => {
  const { page: ap } = await signedInPage(e, e.tenantAdmin, '/sessions');
  await ap.getByRole('link', { name: 'Refactor the parser' }).waitFor();

  const colleague = await createUser(e.app, e.admin, { role: 'user', tenant_id: e.tenant });
  for (const who of [colleague, e.stranger]) {
    const { page, errors } = await signedInPage(e, who, `/sessions/${sessionId}`);
    await page.getByRole('alert').getByText('Session not found').waitFor();
    assert.deepEqual(
      errors.filter((x) => !/status of 404/.test(x)),
      [],
    );
    await page.goto('/sessions');
    await page.getByText('No workspace sessions yet.').waitFor();
  }
});

test('delete from the detail page asks first, then the session is gone from the API', async () => {
  const { page } = await signedInPage(e, e.user, `/sessions/${sessionId}`);
  await page.getByRole('button', { name: 'Delete session' }).waitFor();
  page.once('dialog', (d) => d.dismiss());
  await page.getByRole('button', { name: 'Delete session' }).click();
  assert.equal(
    (await api(e.app.url, 'GET', `/api/sessions/${sessionId}`, { auth: e.user.session })).status,
    200,
  );
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete session' }).click();
  await page.waitForURL((u) => u.pathname === '/sessions');
  await page.getByText('No workspace sessions yet.').waitFor();
  assert.equal(
    (await api(e.app.url, 'GET', `/api/sessions/${sessionId}`, { auth: e.user.session })).status,
    404,
  );
});
