// The API reference page in a real Chromium on the real API (issue 16 item 1): reached from the
// header link, it lists the operations of GET /api/openapi.json by tag; the filter narrows them
// (and says how many match); opening GET /api/analytics/forecast shows its authentication, its
// `days` query parameter with its range, and its 200 answer's fields with required marks, all read
// from the document (compared with what the server serves, not with a copy).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';

let e: Everyday;

before(async () => {
  e = await startEveryday();
});
after(async () => {
  await e?.close();
});

test('the reference lists operations by tag, filters, and shows parameters and responses', async () => {
  const doc = (await (await fetch(`${e.app.url}/api/openapi.json`)).json()) as any;
  const total = Object.values<any>(doc.paths).reduce(
    (n, item) =>
      n + Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).length,
    0,
  );
  const { page, errors } = await signedInPage(e, e.user, '/');
  await page.getByRole('link', { name: 'API reference' }).click();
  await page.getByRole('heading', { name: 'API reference', level: 1 }).waitFor();
  await page.getByText(`${total} of ${total} operations`).waitFor();
  for (const tag of ['analytics', 'remote', 'ops'])
    assert.ok(
      await page.getByRole('heading', { name: new RegExp(`^${tag} \\(\\d+\\)$`), level: 2 }).isVisible(),
      tag,
    );

  await page.getByLabel('Filter operations').fill('get forecast');
  const forecastOps = Object.keys(doc.paths).filter((p) => p.endsWith('/forecast') && doc.paths[p].get);
  assert.equal(forecastOps.length, 2);
  await page.getByText(`2 of ${total} operations`).waitFor();
  assert.equal(await page.locator('details.op').count(), 2);
  assert.equal(await page.getByRole('heading', { name: /^remote/, level: 2 }).count(), 0);

  const op = page.locator('details[data-operation="get /api/analytics/forecast"]');
  await op.locator('summary').click();
  const body = op.locator('.op-body');
  await body.waitFor();
  const text = (await body.textContent()) ?? '';
  assert.match(text, /Authentication:.*sessionCookie/);
  const days = doc.paths['/api/analytics/forecast'].get.parameters.find((p: any) => p.name === 'days');
  const row = body.locator('.op-params tr', { hasText: 'days' });
  assert.match(
    (await row.textContent()) ?? '',
    new RegExp(`query.*no.*integer.*${days.schema.minimum}..${days.schema.maximum}`),
  );
  const ok = doc.paths['/api/analytics/forecast'].get.responses['200'].content['application/json'].schema;
  const response = body.locator('.op-response', { hasText: /^200/ });
  for (const field of ok.required) {
    const item = response
      .locator('.schema-props > li', { has: page.locator(`code.schema-name:text-is("${field}")`) })
      .first();
    assert.match((await item.textContent()) ?? '', /required/, field);
  }
  // Nested: the forecast points are an array of objects, their fields listed under it.
  assert.match(
    (await response
      .locator('li', { has: page.locator('code.schema-name:text-is("forecast")') })
      .first()
      .textContent()) ?? '',
    /array of object.*date.*lower.*upper/s,
  );
  // Errors are documented with the {error} body.
  assert.match(
    (await body.locator('.op-response', { hasText: /^401/ }).textContent()) ?? '',
    /error.*required.*string/s,
  );
  await screenshot(page, 'api-docs', 'forecast');

  await page.getByLabel('Filter operations').fill('no-such-operation-anywhere');
  await page.getByText('No operation matches the filter.').waitFor();
  assert.equal(await scrollsSideways(page), false);
  assert.deepEqual(errors, []);
});
