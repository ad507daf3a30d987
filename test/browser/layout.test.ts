// Layout and accessibility of every page of the web app (issue 14 item 7) in a real Chromium at
// 1280x800: the user pages as a plain user and as a system administrator, the /manage pages as the
// administrator, and the public pages. The page list is the app's own route registry
// (web/src/routes.ts), so a new page is checked without touching this file; path parameters are filled
// with seeded records where cheap (a conversation, a prompt, a workspace session) and with an unknown id
// otherwise (the page's error state is laid out too). On each page, once loaded (heading shown, no
// "Loading…" left): no horizontal scroll, every input/select/textarea has an accessible name (a
// <label>, aria-label or aria-labelledby naming some text), and keyboard focus is visible: Tab from the
// top reaches a link first, and each of the first tab stops shows an outline or a box-shadow.
// test-process: own: top-level await (the route table is loaded through tsx), which a group cannot require
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { tsImport } from 'tsx/esm/api';
import { newContext, screenshot, scrollsSideways } from '../support/browser.ts';
import { type Everyday, signedInPage, startEveryday, uploadMessages } from '../support/everyday-pages.ts';
import { ADMIN } from '../support/harness.ts';
import { api } from '../support/session.ts';

// The app's route registry, loaded at run time: a literal import would pull every lazy page (.tsx) into
// the server's typecheck, which has no JSX. A URL from this file's own location, not a bare relative
// path: `npm test` runs this file as a bundle elsewhere (test/support/bundle-tests.ts).
const ROUTES_MODULE = new URL('../../web/src/routes.ts', import.meta.url).href;
// Through tsx's `tsImport`: the bundle's process has no TypeScript loader of its own.
const { routes } = (await tsImport(ROUTES_MODULE, import.meta.url)) as {
  routes: { path: string; admin?: true }[];
};

/** How many tab stops from the top of each page are checked for a visible focus indicator. */
const TAB_STOPS = 12;

let e: Everyday;
const ids: Record<string, string> = {};

before(async () => {
  e = await startEveryday();
  const conversation = `conv-${randomUUID()}`;
  await uploadMessages(e.app, e.user.username, [
    {
      role: 'user',
      content: 'How do I lay out a wide table?',
      conversation_id: conversation,
      input_tokens: 1200,
    },
    {
      role: 'assistant',
      content: `A long unbroken answer: ${'x'.repeat(400)}`,
      conversation_id: conversation,
      output_tokens: 4321,
    },
  ]);
  const prompt = await api(e.app.url, 'POST', '/api/prompts', {
    auth: e.user.session,
    body: { name: 'Layout prompt', category: 'general', content: 'Explain {{topic}} briefly' },
  });
  assert.equal(prompt.status, 201, JSON.stringify(prompt.body));
  const session = await api(e.app.url, 'POST', '/api/sessions', {
    auth: e.user.session,
    body: { tool_name: 'claude', title: 'Layout session', project_path: '/home/dev/a/rather/long/path' },
  });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  ids['/messages/conversations/:id'] = conversation;
  ids['/prompts/:id'] = String(prompt.body.template.id);
  ids['/sessions/:id'] = session.body.session.session_id;
});
after(async () => {
  await e?.close();
});

/** The route's path with its parameters filled (seeded ids, else an unknown id). */
function concrete(pattern: string): string {
  const seeded = ids[pattern];
  return pattern
    .split('/')
    .map((part) => (part.startsWith(':') ? encodeURIComponent(seeded ?? randomUUID()) : part))
    .join('/');
}

const userPaths = routes.filter((r) => !r.path.startsWith('/manage')).map((r) => r.path);
const managePaths = routes.filter((r) => r.path.startsWith('/manage')).map((r) => r.path);

/** Waits until the page has its heading and no loading indicator left. */
async function settled(page: Page) {
  await page.locator('h1').first().waitFor();
  await page.waitForFunction(() => document.querySelectorAll('.loading, [aria-busy="true"]').length === 0);
}

/** Inputs without an accessible name (described by their HTML), visible or not. */
function unlabelled(page: Page): Promise<string[]> {
  // No named functions inside: the test transpiler would wrap them in a helper the page does not have.
  return page.evaluate(() => {
    const out: string[] = [];
    for (const el of document.querySelectorAll<HTMLInputElement>('input, select, textarea')) {
      if (el.type === 'hidden') continue;
      if ([...(el.labels ?? [])].some((l) => (l.textContent ?? '').trim())) continue;
      if ((el.getAttribute('aria-label') ?? '').trim()) continue;
      const by = (el.getAttribute('aria-labelledby') ?? '').split(' ').filter(Boolean);
      if (by.some((id) => (document.getElementById(id)?.textContent ?? '').trim())) continue;
      out.push(el.outerHTML.slice(0, 200));
    }
    return out;
  });
}

/** Tabs from the top of the page: the element focused at each stop and whether its focus shows. */
async function tabStops(page: Page, count: number) {
  // Start from the top of the document, whatever the page focused on its own (the terminal focuses
  // xterm): a focusable-by-script marker first in <body> becomes the starting point of Tab.
  await page.evaluate(() => {
    const top = document.createElement('span');
    top.tabIndex = -1;
    top.dataset.layoutTop = '';
    document.body.prepend(top);
    top.focus();
  });
  const stops: { tag: string; text: string; visible: boolean; style: string }[] = [];
  for (let i = 0; i < count; i++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      const s = getComputedStyle(el);
      const outline = s.outlineStyle !== 'none' && Number.parseFloat(s.outlineWidth) > 0;
      const shadow = s.boxShadow !== 'none' && s.boxShadow !== '';
      return {
        tag: el.tagName.toLowerCase(),
        text: (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40),
        visible: outline || shadow,
        style: `outline: ${s.outlineStyle} ${s.outlineWidth}; box-shadow: ${s.boxShadow}`,
      };
    });
    if (!stop) break; // focus left the document: the page has fewer stops
    stops.push(stop);
  }
  return stops;
}

/** Every check on one loaded page; returns the problems found, in words. */
async function problemsOf(page: Page, label: string, shell = true): Promise<string[]> {
  const problems: string[] = [];
  if (await scrollsSideways(page)) {
    const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    problems.push(`${label}: horizontal scroll (${widths[0]} > ${widths[1]})`);
  }
  for (const html of await unlabelled(page)) problems.push(`${label}: input without a label: ${html}`);
  const stops = await tabStops(page, TAB_STOPS);
  if (!stops.length) problems.push(`${label}: Tab focuses nothing`);
  else if (shell && stops[0]!.tag !== 'a')
    problems.push(`${label}: the first tab stop is a <${stops[0]!.tag}>, not a link`);
  for (const s of stops)
    if (!s.visible) problems.push(`${label}: no visible focus on <${s.tag}> "${s.text}" (${s.style})`);
  return problems;
}

async function checkAll(who: { username: string; password: string }, role: string, patterns: string[]) {
  const { page } = await signedInPage(e, who, '/');
  const problems: string[] = [];
  for (const pattern of patterns) {
    const p = concrete(pattern);
    await page.goto(p);
    try {
      await settled(page);
    } catch {
      problems.push(`${role} ${p}: no <h1>, or still loading, after 15 s`);
    }
    await screenshot(page, 'layout', `${role}${pattern === '/' ? '-dashboard' : pattern}`);
    problems.push(...(await problemsOf(page, `${role} ${p}`)));
  }
  await page.context().close();
  return problems;
}

test('public pages: the login page and the forced password change', async () => {
  const ctx = await newContext(e.browser, e.app.url);
  const page = await ctx.newPage();
  await page.goto('/login');
  await settled(page);
  await screenshot(page, 'layout', 'login');
  // Outside the shell there is no skip link: the first tab stop is the form's first field.
  const problems = await problemsOf(page, 'login', false);
  // The checks can fail: a field whose label lost its `for`, focus styles removed from the fields and
  // the button, and a too-wide element are each reported (styles set through the CSSOM, CSP-safe).
  const broken = await page.evaluate(() => {
    document.querySelector('label[for]')?.removeAttribute('for');
    for (const el of document.querySelectorAll<HTMLElement>('input, button')) {
      el.style.outline = 'none';
      el.style.boxShadow = 'none';
    }
    const wide = document.createElement('div');
    wide.style.width = '1600px';
    wide.style.height = '1px';
    wide.id = 'layout-too-wide';
    document.body.append(wide);
    return true;
  });
  assert.ok(broken);
  const caught = await problemsOf(page, 'login-broken', false);
  assert.ok(
    caught.some((p) => p.includes('horizontal scroll')),
    caught.join('\n'),
  );
  assert.ok(
    caught.some((p) => p.includes('input without a label')),
    caught.join('\n'),
  );
  assert.ok(
    caught.some((p) => p.includes('no visible focus on <button>')),
    caught.join('\n'),
  );
  await page.reload();
  await settled(page);
  await page.getByLabel('Username').fill(e.user.username);
  await page.getByLabel('Password', { exact: true }).fill(e.user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  await page.goto('/change-password');
  await settled(page);
  await screenshot(page, 'layout', 'change-password');
  problems.push(...(await problemsOf(page, 'change-password', false)));
  await ctx.close();
  assert.deepEqual(problems, []);
});

test(`every user page at 1280x800, as a plain user (${userPaths.length} pages)`, async () => {
  const problems = await checkAll(e.user, 'user', userPaths);
  assert.deepEqual(problems, []);
});

test(`every user page and every /manage page at 1280x800, as a system administrator (${userPaths.length + managePaths.length} pages)`, async () => {
  assert.ok(managePaths.length >= 9, managePaths.join(' '));
  const problems = await checkAll(ADMIN, 'admin', [...userPaths, ...managePaths]);
  assert.deepEqual(problems, []);
});
