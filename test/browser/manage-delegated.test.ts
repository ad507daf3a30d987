// Delegated administration in a real Chromium against the real API (issue 28 items 1 and 5): a tenant
// admin (made administrator of one machine of its tenant by the system administrator) creates a user,
// sets the user's quota and assigns the user to the machine, all through the pages, and each is read
// back through the API; a manager opens what its permissions allow (the users list read-only, the
// audit log with its export) and is offered nothing else. Screenshots at 1280 and 390 px wide.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createUser, uniqueName } from '../support/actors.ts';
import { screenshot } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { assign, registerFakeMachine } from '../support/remote.ts';
import { api } from '../support/session.ts';

let e: Everyday;
before(async () => {
  e = await startEveryday();
});
after(async () => {
  await e?.close();
});

const SHOTS = 'manage-delegated';

/** Screenshots of the page as it is, at 1280 and at 390 px wide (back to 1280 after). */
async function shots(page: Page, name: string) {
  await screenshot(page, SHOTS, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, SHOTS, `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

const tabsOf = (page: Page) =>
  page.getByRole('navigation', { name: 'Administration' }).getByRole('link').allTextContents();

async function openTab(page: Page, title: string) {
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: title }).click();
  await page.getByRole('heading', { name: title, level: 1 }).waitFor();
}

const status = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();

async function refused(page: Page, path: string) {
  await page.goto(path);
  await page.getByRole('heading', { name: 'Not available to you', level: 1 }).waitFor();
  await page.getByRole('alert').getByText('Your role does not give access to this page').waitFor();
}

test('a tenant admin creates a user, sets the quota and assigns the machine through the pages', async () => {
  const machine = await registerFakeMachine(e.app.url, e.admin, e.tenant);
  assert.equal((await assign(e.app.url, e.admin, machine.machineId, e.tenantAdmin.id, 'admin')).status, 200);
  const { page, errors } = await signedInPage(e, e.tenantAdmin, '/manage');
  await page.getByRole('heading', { name: 'Administration', level: 1 }).waitFor();
  assert.deepEqual(await tabsOf(page), [
    'Users',
    'Machines',
    'Provider keys',
    'Filter rules',
    'Audit log',
    'Compliance',
  ]);
  await shots(page, 'tenant-admin-overview');

  // Create: no tenant picker, the user lands in the tenant admin's tenant.
  await openTab(page, 'Users');
  assert.equal(await page.getByLabel('Tenant', { exact: true }).count(), 0);
  const username = uniqueName('delegated');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Initial password').fill('a-long-enough-password-1');
  await page.getByRole('button', { name: 'Create user' }).click();
  await status(page, `User ${username} created`);
  const listed = async () =>
    (await api(e.app.url, 'GET', '/api/admin/users', { auth: e.admin })).body.users.find(
      (u: { username: string }) => u.username === username,
    );
  const created = await listed();
  assert.equal(created?.tenant_id, e.tenant);
  assert.equal(created?.role, 'user');

  // Quota: typed in millions (the label says so), shown in tokens like the tenant's limits.
  await page.getByRole('button', { name: `Quota of ${username}` }).click();
  await page.getByLabel('Daily token limit (millions of tokens)').fill('2');
  await page.getByLabel('Daily request limit (requests)').fill('500');
  await page.getByRole('button', { name: 'Save quota' }).click();
  await status(page, `Quota of ${username} saved`);
  const withQuota = await listed();
  assert.equal(withQuota.daily_token_quota, 2);
  assert.equal(withQuota.daily_request_quota, 500);
  const twoMillion = await page.evaluate(() => `${new Intl.NumberFormat().format(2_000_000)} tokens`);
  await page.getByRole('row').filter({ hasText: username }).getByText(twoMillion).waitFor();
  await shots(page, 'tenant-admin-users');

  // Assign: the machine's users panel; no permission picker (the API stores `user` anyway).
  await openTab(page, 'Machines');
  const name = `test-${machine.machineId.slice(0, 8)}`;
  await page.getByRole('button', { name: `Users of ${name}` }).click();
  await page.getByRole('heading', { name: `Users of ${name}` }).waitFor();
  assert.equal(await page.getByLabel('Permission on this machine').count(), 0);
  // Nothing chosen: said in words, nothing sent.
  await page.getByRole('button', { name: 'Assign', exact: true }).click();
  await page.getByRole('alert').getByText('Choose the user to assign').waitFor();
  await page.getByLabel('User to assign').selectOption({ label: `${username} (user)` });
  await page.getByRole('button', { name: 'Assign', exact: true }).click();
  await status(page, `${username} assigned to ${name}`);
  const machineUsers = async () =>
    (await api(e.app.url, 'GET', `/api/remote/machines/${machine.machineId}/users`, { auth: e.admin })).body
      .users as { user_id: number; permission: string }[];
  assert.equal((await machineUsers()).find((u) => u.user_id === created.id)?.permission, 'user');
  await page
    .getByRole('table', { name: `Assigned to ${name}` })
    .getByText(username)
    .waitFor();
  await shots(page, 'tenant-admin-machines');

  // Unassign, confirmed in place; the API no longer lists the user.
  await page.getByRole('button', { name: `Unassign ${username}` }).click();
  await page.getByRole('alertdialog', { name: 'Confirm' }).getByRole('button', { name: 'Confirm' }).click();
  await status(page, `${username} unassigned from ${name}`);
  assert.equal(
    (await machineUsers()).find((u) => u.user_id === created.id),
    undefined,
  );

  // Stored keys of its own tenant: no tenant picker; the API lists the key in the tenant.
  await openTab(page, 'Provider keys');
  assert.equal(await page.getByLabel('Tenant', { exact: true }).count(), 0);
  const keyName = uniqueName('key');
  await page.getByLabel('Key name').fill(keyName);
  await page.getByLabel('API key').fill('sk-delegated-0123456789abcdef');
  await page.getByRole('button', { name: 'Store key' }).click();
  await status(page, `Key ${keyName} stored`);
  const stored = await api(e.app.url, 'GET', '/api/api-keys', { auth: e.tenantAdmin.session });
  assert.equal(
    stored.body.keys.find((k: { key_name: string }) => k.key_name === keyName)?.tenant_id,
    e.tenant,
  );
  await shots(page, 'tenant-admin-keys');

  // Pages for system administrators are not offered and say why when typed in.
  await refused(page, '/manage/tenants');
  await shots(page, 'tenant-admin-refused');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a manager reads the users list and the audit log with its export, and is offered nothing else', async () => {
  const m = await createUser(e.app, e.admin, { role: 'manager', tenant_id: e.tenant });
  const { page, errors } = await signedInPage(e, m, '/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { name: 'Administration', level: 1 }).waitFor();
  assert.deepEqual(await tabsOf(page), ['Users', 'Audit log']);
  await shots(page, 'manager-overview');

  await openTab(page, 'Users');
  await page.getByRole('table').getByText(e.user.username, { exact: true }).waitFor();
  await page.getByText('Read-only: your role shows the users of your tenant').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Create user' }).count(), 0);
  assert.equal(await page.getByRole('button', { name: `Edit ${e.user.username}` }).count(), 0);
  assert.equal(
    await page.getByRole('table').getByText(e.stranger.username, { exact: true }).count(),
    0,
    'other tenant',
  );
  await shots(page, 'manager-users');

  await openTab(page, 'Audit log');
  const csv = page.getByRole('link', { name: 'Export CSV' });
  await csv.waitFor();
  const href = await csv.getAttribute('href');
  const download = await page.request.get(href!);
  assert.equal(download.status(), 200, await download.text());
  await shots(page, 'manager-audit');

  for (const path of ['/manage/machines', '/manage/filters', '/manage/keys']) await refused(page, path);
  await shots(page, 'manager-refused');
  assert.deepEqual(errors, []);
  await page.context().close();
});
