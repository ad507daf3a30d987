// Honest status and the narrow layout (issue 28 items 5 and 6) in a real Chromium: the first-run
// dashboard of an install without usage (steps per role), per-user read state of alerts with two
// administrators of one tenant, a content-filter verdict shown on the flagged message and reached from
// the alert's link, and every main page at 390 and 360 px without sideways scroll, with the menu button
// opening and closing the navigation (click, Escape, navigation). Screenshots of each main page at
// 1280 and 390 px go to test-artifacts/screenshots/responsive-*.png.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { createUser } from '../support/actors.ts';
import { screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday, uploadMessages } from '../support/everyday-pages.ts';
import { ADMIN } from '../support/harness.ts';
import { api } from '../support/session.ts';

let e: Everyday;

before(async () => {
  e = await startEveryday();
});
after(async () => {
  await e?.close();
});

async function settled(page: Page) {
  await page.locator('h1').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.loading, [aria-busy="true"]').length === 0);
}

// Runs first: nothing has been uploaded yet.
test('first run: the dashboard says what to do next, each step only to whom can take it', async () => {
  const summary = await api(e.app.url, 'GET', '/api/summary', { auth: e.admin });
  assert.equal(summary.body.total_tokens, 0, 'an install without usage');

  const admin = await signedInPage(e, ADMIN, '/');
  const panel = admin.page.locator('[data-first-run="true"]');
  await panel.waitFor();
  assert.equal(await admin.page.locator('[data-figure="total-tokens"]').count(), 0, 'no bare zeros');
  const steps = await panel
    .locator('[data-step]')
    .evaluateAll((els) => els.map((el) => el.getAttribute('data-step')));
  assert.deepEqual(steps, ['usage', 'machine', 'key']);
  const hrefs = await panel.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(hrefs, ['/upload-tokens', '/manage/machines', '/remote', '/manage/keys']);
  await screenshot(admin.page, 'responsive', 'first-run-admin-1280');
  await panel.getByRole('link', { name: 'Add a provider key' }).click();
  await admin.page.waitForURL((u) => u.pathname === '/manage/keys');
  assert.deepEqual(admin.errors, []);
  await admin.page.context().close();

  const user = await signedInPage(e, e.user, '/');
  const userPanel = user.page.locator('[data-first-run="true"]');
  await userPanel.waitFor();
  const userSteps = await userPanel
    .locator('[data-step]')
    .evaluateAll((els) => els.map((el) => el.getAttribute('data-step')));
  assert.deepEqual(userSteps, ['usage'], 'a user cannot register machines or store provider keys');
  await user.page.setViewportSize({ width: 390, height: 800 });
  assert.equal(await scrollsSideways(user.page), false);
  await screenshot(user.page, 'responsive', 'first-run-user-390');
  await userPanel.getByRole('link', { name: 'Create an upload token' }).click();
  await user.page.waitForURL((u) => u.pathname === '/upload-tokens');
  await user.page.context().close();
});

test('alert read state is per user: one admin marks all read, the other still sees them unread', async () => {
  const second = await createUser(e.app, e.admin, { role: 'tenant_admin', tenant_id: e.tenant });
  const tag = randomUUID().slice(0, 6);
  for (const title of [`Quota exceeded ${tag}`, `Login failures ${tag}`])
    await raiseAlert(e.app.database, {
      alertType: 'security',
      severity: 'critical',
      title,
      message: null,
      userId: null,
      tenantId: e.tenant,
    });
  const one = await signedInPage(e, e.tenantAdmin, '/alerts');
  await one.page.getByText(`Login failures ${tag}`, { exact: true }).waitFor();
  await one.page.locator('.badge', { hasText: '2 unread' }).waitFor();
  await one.page.getByRole('button', { name: 'Mark all read' }).click();
  await one.page.locator('.badge', { hasText: '0 unread' }).waitFor();
  assert.equal(await one.page.locator('.alert .new').count(), 0);

  const two = await signedInPage(e, second, '/alerts');
  await two.page.getByText(`Login failures ${tag}`, { exact: true }).waitFor();
  await two.page.locator('.badge', { hasText: '2 unread' }).waitFor();
  assert.equal(await two.page.locator('.alert .new').count(), 2, 'still new for the second admin');
  await two.page.getByRole('link', { name: '2 unread alerts' }).waitFor();
  await screenshot(two.page, 'responsive', 'alerts-second-admin-unread');
  await two.page.getByRole('button', { name: `Mark “Quota exceeded ${tag}” read` }).click();
  await two.page.locator('.badge', { hasText: '1 unread' }).waitFor();

  // The first admin's view is unchanged by the second's reading, after a reload too.
  await one.page.reload();
  await one.page.getByText(`Login failures ${tag}`, { exact: true }).waitFor();
  await one.page.locator('.badge', { hasText: '0 unread' }).waitFor();
  await one.page.context().close();
  await two.page.context().close();
});

test('a blocked message shows the verdict in words, and the filter alert links to it', async () => {
  const word = `leak${randomUUID().slice(0, 6)}`;
  const rule = await api(e.app.url, 'POST', '/api/filter-rules', {
    auth: e.admin,
    body: { pattern: word, action: 'block', severity: 'high', description: 'Leaked secrets' },
  });
  assert.equal(rule.status, 201, JSON.stringify(rule.body));
  await uploadMessages(e.app, e.user.username, [
    { role: 'user', content: `here is the ${word} value`, input_tokens: 10 },
    { role: 'assistant', content: 'a clean answer', output_tokens: 20 },
  ]);
  const { page, errors } = await signedInPage(e, e.tenantAdmin, '/alerts');
  const link = page.locator('.alert-links a').first();
  await link.waitFor();
  await screenshot(page, 'responsive', 'alerts-filter-link');
  await link.click();
  await page.waitForURL((u) => u.pathname === '/messages' && u.searchParams.get('host') === 'pages-host');
  const verdict = page.locator('[data-verdict="blocked"]');
  await verdict.waitFor();
  assert.equal(
    (await verdict.textContent())?.trim(),
    `Blocked by the content filter: rule “Leaked secrets” (keyword, action block)`,
  );
  const row = page.locator('tr', { has: verdict });
  assert.match((await row.textContent()) ?? '', new RegExp(word));
  assert.equal(await page.locator('[data-verdict]').count(), 1, 'the clean message shows no verdict');
  await screenshot(page, 'responsive', 'messages-verdict');
  assert.deepEqual(errors, []);
  await page.context().close();
});

const MAIN_PAGES = [
  ['dashboard', '/'],
  ['messages', '/messages'],
  ['alerts', '/alerts'],
  ['sessions', '/sessions'],
  ['remote', '/remote'],
  ['autonomous', '/autonomous'],
  ['manage', '/manage'],
] as const;

test('every main page at 390 and 360 px: no sideways scroll, the menu opens and closes', async () => {
  await uploadMessages(e.app, e.user.username, [
    { role: 'user', content: `A long question ${'y'.repeat(300)}`, input_tokens: 1_500_000 },
    { role: 'assistant', content: 'An answer', output_tokens: 2_300_000 },
  ]);
  const { page, errors } = await signedInPage(e, ADMIN, '/');
  const problems: string[] = [];
  const menu = page.getByRole('button', { name: 'Menu' });
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (const [name, path] of MAIN_PAGES) {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(path);
    await settled(page);
    assert.equal(await menu.isVisible(), false, 'no menu button on a wide screen');
    assert.equal(await nav.isVisible(), true);
    await screenshot(page, 'responsive', `${name}-1280`);
    for (const width of [390, 360]) {
      await page.setViewportSize({ width, height: 800 });
      await settled(page);
      if (await scrollsSideways(page)) {
        const w = await page.evaluate(() => document.documentElement.scrollWidth);
        problems.push(`${name} at ${width} px scrolls sideways (${w} px wide)`);
      }
      if (width === 390) await screenshot(page, 'responsive', `${name}-390`);
      // Closed: the button says so and the navigation is hidden.
      assert.equal(await menu.getAttribute('aria-expanded'), 'false', `${name} ${width}`);
      assert.equal(await nav.isVisible(), false, `${name} ${width}: nav hidden behind the menu`);
      await menu.click();
      assert.equal(await menu.getAttribute('aria-expanded'), 'true');
      assert.equal(await nav.isVisible(), true);
      if (await scrollsSideways(page))
        problems.push(`${name} at ${width} px with the menu open scrolls sideways`);
      // Keyboard: Escape closes it and gives the focus back to the button; Enter opens it again.
      await page.keyboard.press('Escape');
      assert.equal(await menu.getAttribute('aria-expanded'), 'false');
      assert.equal(
        await page.evaluate(() => document.activeElement?.classList.contains('menu-button')),
        true,
      );
      await page.keyboard.press('Enter');
      assert.equal(await menu.getAttribute('aria-expanded'), 'true');
      await menu.click();
      assert.equal(await nav.isVisible(), false);
    }
  }
  // A navigation closes the open menu.
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto('/');
  await settled(page);
  await menu.click();
  await nav.getByRole('link', { name: 'Messages' }).click();
  await page.waitForURL((u) => u.pathname === '/messages');
  assert.equal(await menu.getAttribute('aria-expanded'), 'false');
  assert.equal(await nav.isVisible(), false);
  // So does a link to the page already shown.
  await menu.click();
  await nav.getByRole('link', { name: 'Messages' }).click();
  assert.equal(await menu.getAttribute('aria-expanded'), 'false');
  assert.equal(await nav.isVisible(), false);
  assert.deepEqual(problems, []);
  assert.deepEqual(errors, []);
  await page.context().close();
});
