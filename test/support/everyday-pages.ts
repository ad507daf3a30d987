// Shared by the browser tests of the everyday pages (test/browser/{dashboard,messages,alerts,prompts,
// sessions}.test.ts): a real API with a tenant, its administrator and a plain user, a Chromium, a
// signed-in page per user, messages uploaded through the real upload API (with content and a
// conversation id, so search and timelines have something to find), and a figure read from the page.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { createTenant, createUser } from './actors.ts';
import { launchBrowser, newContext, watchErrors } from './browser.ts';
import { ADMIN, startTestApp, type TestApp } from './harness.ts';
import { UPLOAD_KEY } from './quota.ts';
import { api, login, type Session } from './session.ts';

export interface Person {
  id: number;
  username: string;
  password: string;
  session: Session;
}

export interface Everyday {
  app: TestApp;
  browser: Browser;
  admin: Session;
  tenant: number;
  tenantAdmin: Person;
  user: Person;
  /** A user of another tenant (for the "who else can see it" checks). */
  stranger: Person;
  close(): Promise<void>;
}

async function person(app: TestApp, admin: Session, role: string, tenant: number): Promise<Person> {
  const u = await createUser(app, admin, { role, tenant_id: tenant });
  return { ...u, session: await login(app.url, u.username, u.password) };
}

export async function startEveryday(): Promise<Everyday> {
  const app = await startTestApp();
  const browser = await launchBrowser();
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const tenant = await createTenant(app, admin);
  const other = await createTenant(app, admin);
  const tenantAdmin = await person(app, admin, 'tenant_admin', tenant);
  const user = await person(app, admin, 'user', tenant);
  const stranger = await person(app, admin, 'user', other);
  return {
    app,
    browser,
    admin,
    tenant,
    tenantAdmin,
    user,
    stranger,
    async close() {
      await browser.close();
      await app.close();
    },
  };
}

/** A fresh context signed in as `who` through the login form, on `path`; console errors collected. */
export async function signedInPage(
  e: Everyday,
  who: { username: string; password: string },
  path = '/',
): Promise<{ page: Page; errors: string[] }> {
  const ctx = await newContext(e.browser, e.app.url);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await page.goto(`/login?next=${encodeURIComponent(path)}`);
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password', { exact: true }).fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname === path.split('?')[0]);
  return { page, errors };
}

export interface SeedMessage {
  role: 'user' | 'assistant';
  content: string;
  input_tokens?: number;
  output_tokens?: number;
  conversation_id?: string;
  tool_name?: string;
}

/** Messages sent today by `username` through POST /api/upload/batch, in order, a second apart. */
export async function uploadMessages(app: TestApp, username: string, messages: SeedMessage[]) {
  const base = Date.now() - messages.length * 1000;
  const rows = messages.map((m, i) => ({
    date: new Date(base + i * 1000).toISOString().slice(0, 10),
    tool_name: m.tool_name ?? 'cli_pages',
    host_name: 'pages-host',
    message_id: randomUUID(),
    role: m.role,
    content: m.content,
    sender_name: username,
    input_tokens: m.input_tokens ?? 0,
    output_tokens: m.output_tokens ?? 0,
    conversation_id: m.conversation_id,
    timestamp: new Date(base + i * 1000).toISOString(),
  }));
  const r = await api(app.url, 'POST', '/api/upload/batch', {
    headers: UPLOAD_KEY,
    body: { messages: rows },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

/** The number the page shows (thousands separators and all), and the browser's own format of `n`. */
export async function shownAndExpected(page: Page, selector: string, n: number) {
  const shown = (await page.locator(selector).first().textContent())?.trim();
  const expected = await page.evaluate((v) => new Intl.NumberFormat().format(v), n);
  return { shown, expected };
}
