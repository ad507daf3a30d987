// Prompt templates in a real Chromium on the real API (issue 14 item 2): create with field errors
// first, variables filled from the text's placeholders, the stored template equal to what was typed;
// try it (render); edit; another user of the tenant sees a public template read-only (the API refuses
// them a change), another tenant's user gets the API's 404 in words; delete from the list.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createUser } from '../support/actors.ts';
import { screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { api } from '../support/session.ts';

let e: Everyday;

before(async () => {
  e = await startEveryday();
});
after(async () => {
  await e?.close();
});

test('create, try, edit and delete a template; others see it read-only or not at all', async () => {
  const { page, errors } = await signedInPage(e, e.user, '/prompts');
  await page.getByText('No templates yet. Create the first one.').waitFor();
  await screenshot(page, 'prompts', 'empty');
  await page.getByRole('link', { name: 'New template' }).click();
  await page.getByRole('heading', { name: 'New prompt template' }).waitFor();

  await page.getByRole('button', { name: 'Create template' }).click();
  await page.getByText('A name is required').waitFor();
  await page.getByText('The template text is required').waitFor();
  assert.equal(new URL(page.url()).pathname, '/prompts/new');
  await screenshot(page, 'prompts', 'new-errors');

  await page.getByLabel('Name').fill('Code review');
  await page.getByLabel('Category').fill('review');
  await page.getByLabel('Template text').fill('Review {{file}} written in {{ lang }}.');
  await page.getByRole('button', { name: 'Fill variables from the text' }).click();
  assert.equal(await page.getByLabel('Variables').inputValue(), 'file, lang');
  await page.getByLabel('Tags').fill('code, review');
  await page.getByLabel('Visible to everyone in my tenant').check();
  await page.getByRole('button', { name: 'Create template' }).click();
  await page.waitForURL(/\/prompts\/\d+$/);
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const stored = (await api(e.app.url, 'GET', `/api/prompts/${id}`, { auth: e.user.session })).body.template;
  assert.deepEqual(
    {
      name: stored.name,
      category: stored.category,
      content: stored.content,
      variables: stored.variables,
      tags: stored.tags,
      is_public: stored.is_public,
    },
    {
      name: 'Code review',
      category: 'review',
      content: 'Review {{file}} written in {{ lang }}.',
      variables: ['file', 'lang'],
      tags: ['code', 'review'],
      is_public: true,
    },
  );

  // Try it: the API renders, the use count grows.
  await page.getByLabel('file', { exact: true }).fill('parser.ts');
  await page.getByLabel('lang', { exact: true }).fill('TypeScript');
  await page.getByRole('button', { name: 'Render' }).click();
  await page.locator('.rendered', { hasText: 'Review parser.ts written in TypeScript.' }).waitFor();
  assert.equal(
    (await api(e.app.url, 'GET', `/api/prompts/${id}`, { auth: e.user.session })).body.template.use_count,
    1,
  );
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'prompts', 'editor');

  await page.getByLabel('Name').fill('Careful code review');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved.').waitFor();
  assert.equal(
    (await api(e.app.url, 'GET', `/api/prompts/${id}`, { auth: e.user.session })).body.template.name,
    'Careful code review',
  );

  // A colleague sees the public template read-only; the API refuses them a change.
  const colleague = await createUser(e.app, e.admin, { role: 'user', tenant_id: e.tenant });
  const { page: cp } = await signedInPage(e, colleague, `/prompts/${id}`);
  await cp.getByText('Only its author or an administrator can change it.').waitFor();
  assert.equal(await cp.getByRole('button', { name: 'Save changes' }).count(), 0);
  await screenshot(cp, 'prompts', 'read-only');

  // Another tenant: the API's 404 in words.
  const { page: sp, errors: strangerErrors } = await signedInPage(e, e.stranger, `/prompts/${id}`);
  await sp.getByRole('alert').getByText('Prompt template not found').waitFor();
  assert.deepEqual(
    strangerErrors.filter((x) => !/status of 404/.test(x)),
    [],
  );

  // Back on the list: search finds it, delete removes it (after a confirmation).
  await page.getByRole('link', { name: 'All templates' }).click();
  await page.getByLabel('Search templates').fill('careful');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByRole('link', { name: 'Careful code review' }).waitFor();
  await screenshot(page, 'prompts', 'list');
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete Careful code review' }).click();
  await page.getByText('No template matches.').waitFor();
  assert.equal((await api(e.app.url, 'GET', `/api/prompts/${id}`, { auth: e.user.session })).status, 404);
  assert.deepEqual(errors, []);
});
