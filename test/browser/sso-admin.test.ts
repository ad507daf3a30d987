// The SSO administration page in a real Chromium (issue 28 item 4): the redirect URI follows the
// provider name as it is typed; a redirect URI that does not end with the provider's callback path is
// refused by the API and the form keeps everything typed (the client secret included); a provider is
// edited (its stored secret is never shown and a blank secret keeps it). Screenshots at 1280 and 390 px.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday } from '../support/everyday-pages.ts';
import { ADMIN, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

let e: Everyday;
let app: TestApp;

before(async () => {
  e = await startEveryday();
  app = e.app;
});
after(async () => {
  await e?.close();
});

const storedSecret = async (name: string) => {
  const [row] = await app.database.sql.query<{ config: string }>(
    'SELECT config FROM sso_providers WHERE name = ?',
    [name],
  );
  return JSON.parse(row!.config).client_secret_encrypted as string;
};

test('the SSO form builds the redirect URI from the name, keeps what was typed after a refusal, and edits a provider', async () => {
  const { page, errors } = await signedInPage(e, ADMIN, '/manage/sso');
  await page.getByText('No identity provider is registered.').waitFor();

  const redirect = page.getByLabel('Redirect URI');
  await page.getByLabel('Name').pressSequentially('bt-oidc');
  assert.equal(await redirect.inputValue(), `${app.url}/api/sso/callback/bt-oidc`, 'follows the name');

  const secret = 'bt-client-secret-DO-NOT-SHOW';
  await page.getByLabel('Client id').fill('bt-client');
  await page.getByLabel('Client secret').fill(secret);
  await page.getByLabel('Issuer URL').fill('https://idp.example.test');
  await redirect.fill(`${app.url}/api/sso/callback/`);
  await page.getByRole('button', { name: 'Register provider' }).click();
  await page.getByText('redirect_uri: must end with /api/sso/callback/bt-oidc').waitFor();
  const kept = {
    Name: 'bt-oidc',
    'Client id': 'bt-client',
    'Client secret': secret,
    'Issuer URL': 'https://idp.example.test',
    'Redirect URI': `${app.url}/api/sso/callback/`,
  };
  for (const [label, value] of Object.entries(kept))
    assert.equal(await page.getByLabel(label, { exact: true }).inputValue(), value, `${label} kept`);
  await screenshot(page, 'sso-admin', 'refused-1280');

  await redirect.fill(`${app.url}/api/sso/callback/bt-oidc`);
  await page.getByRole('button', { name: 'Register provider' }).click();
  await page.getByRole('status').filter({ hasText: 'Provider bt-oidc registered' }).waitFor();
  const ciphertext = await storedSecret('bt-oidc');

  // Edit: the stored values come back, the secret field is blank; a blank secret keeps the stored one.
  await page.getByRole('button', { name: 'Edit bt-oidc' }).click();
  await page.getByRole('heading', { name: 'Edit bt-oidc' }).waitFor();
  assert.equal(await page.getByLabel('Client id').inputValue(), 'bt-client');
  assert.equal(await page.getByLabel('Client secret').inputValue(), '');
  assert.equal(await page.getByLabel('Name').isDisabled(), true);
  await page.getByLabel('Client id').fill('bt-client-2');
  await page.getByRole('button', { name: 'Save provider' }).click();
  await page.getByRole('status').filter({ hasText: 'Provider bt-oidc saved' }).waitFor();
  const read = await api(app.url, 'GET', '/api/sso/providers/bt-oidc', { auth: e.admin });
  assert.equal(read.body.provider.client_id, 'bt-client-2');
  assert.equal(await storedSecret('bt-oidc'), ciphertext, 'the stored secret is kept');
  const html = await page.evaluate(
    () =>
      document.documentElement.outerHTML +
      [...document.querySelectorAll('input')].map((e) => (e as HTMLInputElement).value).join('\n'),
  );
  assert.ok(!html.includes(secret) && !html.includes(ciphertext), 'no secret in the page');
  await screenshot(page, 'sso-admin', 'saved-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'sso-admin', 'saved-390');
  assert.deepEqual(
    errors.filter((e) => !e.includes('400')),
    [],
  );
});
