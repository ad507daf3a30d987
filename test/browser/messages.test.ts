// Messages and conversation timelines in a real Chromium on the real API (issue 14 item 2): messages
// uploaded through the API are found by full-text search with the count the API gives; the filters live
// in the address; a conversation's timeline shows its messages oldest first with the API's figures; a
// user of another tenant finds nothing and gets the API's 404 in words for the conversation's address;
// a reversed date range is refused before asking.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday, uploadMessages } from '../support/everyday-pages.ts';
import { api } from '../support/session.ts';

let e: Everyday;
const conversation = `conv-${randomUUID()}`;
const needle = `zebraneedle${Date.now().toString(36)}`;

before(async () => {
  e = await startEveryday();
  await uploadMessages(e.app, e.user.username, [
    { role: 'user', content: `How do I load the ${needle} config file?`, conversation_id: conversation },
    {
      role: 'assistant',
      content: `Read it with the parser, then validate the ${needle} section.\nSecond line.`,
      input_tokens: 1200,
      output_tokens: 345,
      conversation_id: conversation,
    },
    { role: 'user', content: 'An unrelated question about lunch', conversation_id: `other-${randomUUID()}` },
  ]);
});
after(async () => {
  await e?.close();
});

test('search finds the messages the API finds, with its count; the timeline shows the conversation', async () => {
  const count = (
    await api(e.app.url, 'GET', `/api/messages/count?search=${needle}`, { auth: e.user.session })
  ).body.count;
  assert.equal(count, 2);
  const { page, errors } = await signedInPage(e, e.user, '/messages');
  await page.getByRole('table', { name: 'Messages, newest first' }).waitFor();
  await screenshot(page, 'messages', 'list');
  await page.getByLabel('Search', { exact: true }).fill(needle);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(`**/messages?search=${needle}`);
  await page.getByText(`${count} messages match`).waitFor();
  const rows = page.getByRole('table', { name: 'Messages, newest first' }).locator('tbody tr');
  assert.equal(await rows.count(), 2);
  assert.equal(await rows.filter({ hasText: 'lunch' }).count(), 0);
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'messages', 'search');

  // Role filter narrows it to the assistant's answer (address carries both).
  await page.getByLabel('Role').selectOption('assistant');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(/role=assistant/);
  await page.getByText('1 message matches').waitFor();

  await rows.first().getByRole('link', { name: 'Timeline' }).click();
  await page.waitForURL(`**/messages/conversations/${conversation}`);
  const timeline = page.getByRole('list', { name: 'Messages, oldest first' });
  await timeline.waitFor();
  const items = await timeline.getByRole('listitem').allTextContents();
  assert.equal(items.length, 2);
  assert.match(items[0] ?? '', /How do I load/);
  assert.match(items[1] ?? '', /Second line/);
  const details = (
    await api(e.app.url, 'GET', `/api/conversation-details/${conversation}`, { auth: e.user.session })
  ).body;
  const expectedTokens = await page.evaluate((v) => new Intl.NumberFormat().format(v), details.total_tokens);
  await page
    .locator('.facts')
    .getByText(new RegExp(`^${expectedTokens} \\(`))
    .waitFor();
  await screenshot(page, 'messages', 'timeline');

  await page.goto('/messages/conversations');
  await page.getByRole('link', { name: conversation }).waitFor();
  await screenshot(page, 'messages', 'conversations');
  assert.deepEqual(errors, []);
});

test('another tenant finds nothing and the conversation’s address answers the API’s 404 in words', async () => {
  const { page, errors } = await signedInPage(e, e.stranger, `/messages?search=${needle}`);
  await page.getByText('No messages match these filters.').waitFor();
  await page.getByText('0 messages match').waitFor();
  await page.goto(`/messages/conversations/${conversation}`);
  await page.getByRole('alert').getByText('Conversation not found').waitFor();
  assert.deepEqual(
    errors.filter((x) => !/status of 404/.test(x)),
    [],
  );
});

test('a reversed date range is refused in words before asking the API', async () => {
  const { page } = await signedInPage(e, e.user, '/messages');
  await page.getByLabel('From date').fill('2026-02-10');
  await page.getByLabel('To date').fill('2026-02-01');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByRole('alert').getByText('The end date is before the start date').waitFor();
  assert.equal(new URL(page.url()).search, '');
});
