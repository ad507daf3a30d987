// A real headless Chromium (playwright-core, Debian's /usr/bin/chromium or SVC_CHROMIUM_PATH) for the
// browser tests in test/browser: one browser per test file, a fresh context (cookies) per user, and
// screenshots of every page seen in test-artifacts/screenshots/<test>-<page>.png.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const SCREENSHOTS = path.resolve('test-artifacts/screenshots');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.SVC_CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    // Containers often run as root without a user namespace sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** A fresh browser context (its own cookies) at desktop width, base URL the test app. */
export async function newContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  const ctx = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 } });
  // A bound for each wait on the page, not a timing: CI runs both suites and the fuzz at once on two
  // cores, and a loaded page load or API answer there can pass 15 s.
  ctx.setDefaultTimeout(45_000);
  return ctx;
}

/** Collects console errors and CSP violations of a page, so a test can assert there were none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

export async function screenshot(page: Page, test: string, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const safe = (s: string) => s.replace(/[^a-zA-Z0-9_-]+/g, '-');
  const file = path.join(SCREENSHOTS, `${safe(test)}-${safe(name)}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** True when the document is wider than the viewport (horizontal scroll). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
}
