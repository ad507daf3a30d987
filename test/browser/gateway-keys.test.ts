// The gateway-keys page in a real Chromium on the real API (issue 29 item 1): a user reaches it from the
// header, creates an Anthropic key with a daily request limit, sees the key once with the Claude Code
// snippet that carries it, and the list shows its prefix and limit but never the key after a reload;
// the tenant's administrator sees the user's key among the tenant's and revokes it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { api } from '../support/session.ts';

let e: Everyday;

before(async () => {
  e = await startEveryday();
});
after(async () => {
  await e?.close();
});

test('create a key (shown once, with a CLI snippet), list it, and a tenant admin revokes it', async () => {
  const { page, errors } = await signedInPage(e, e.user, '/');
  await page.getByRole('link', { name: 'Gateway keys' }).click();
  await page.getByRole('heading', { name: 'Gateway keys', level: 1 }).waitFor();
  await page.getByLabel('Name').fill('browser laptop');
  await page.getByLabel('Provider').selectOption('anthropic');
  await page.getByLabel('Requests per day (optional)').fill('5');
  await page.getByRole('button', { name: 'Create key' }).click();
  const snippet = page.locator('pre', { hasText: 'ANTHROPIC_AUTH_TOKEN=' });
  await snippet.waitFor();
  const key = /ANTHROPIC_AUTH_TOKEN=(svcgk_[A-Za-z0-9_-]{43})/.exec((await snippet.textContent()) ?? '')?.[1];
  assert.ok(key, 'the snippet carries the key');
  assert.match(
    (await snippet.textContent()) ?? '',
    new RegExp(`ANTHROPIC_BASE_URL=${e.app.url}/api/remote/llm-proxy`),
  );
  const row = page.getByRole('row', { name: /browser laptop/ });
  await row.waitFor();
  assert.match((await row.textContent()) ?? '', /5 requests\/day/);
  assert.match((await row.textContent()) ?? '', new RegExp(key.slice(0, 12)));

  await page.reload();
  await page.getByRole('row', { name: /browser laptop/ }).waitFor();
  assert.ok(!((await page.content()) ?? '').includes(key), 'never shown again');
  assert.deepEqual(errors, []);

  const admin = await signedInPage(e, e.tenantAdmin, '/gateway-keys');
  await admin.page.getByRole('button', { name: "Show my tenant's keys" }).click();
  const theirs = admin.page.getByRole('row', { name: /browser laptop/ });
  await theirs.waitFor();
  await theirs.getByRole('button', { name: 'Revoke browser laptop' }).click();
  await admin.page.getByRole('button', { name: 'Revoke', exact: true }).click();
  await admin.page.getByRole('row', { name: /browser laptop.*revoked/ }).waitFor();
  const listed = await api(e.app.url, 'GET', '/api/gateway-keys', { auth: e.user.session });
  assert.ok(listed.body.keys.find((k: { name: string }) => k.name === 'browser laptop').revoked_at);
  assert.deepEqual(admin.errors, []);
});
