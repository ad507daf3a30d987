// A real headless Chromium (playwright-core, Debian's /usr/bin/chromium or SVC_CHROMIUM_PATH) for the
// browser tests in test/browser: a fresh context (cookies, storage) per user, and screenshots of every
// page seen in test-artifacts/screenshots/<test>-<page>.png. `npm test` starts one Chromium for all the
// browser files of a run (startSharedBrowser) and each file connects to it; a file run otherwise
// launches its own.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  type Browser,
  type BrowserContext,
  type BrowserServer,
  chromium,
  type Download,
  type Page,
} from 'playwright-core';

export const SCREENSHOTS = path.resolve('test-artifacts/screenshots');

/** Where `npm test` tells the test files its shared Chromium listens. */
const SHARED_BROWSER = 'SVC_TEST_BROWSER_WS';

const launchOptions = () => ({
  executablePath: process.env.SVC_CHROMIUM_PATH || '/usr/bin/chromium',
  headless: true,
  // Containers often run as root without a user namespace sandbox.
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});

/**
 * The run's shared Chromium when there is one (closing the returned Browser then only disconnects,
 * and closes the contexts this file made), else one of this file's own.
 */
export async function launchBrowser(): Promise<Browser> {
  const shared = process.env[SHARED_BROWSER];
  return shared ? chromium.connect(shared) : chromium.launch(launchOptions());
}

/**
 * One Chromium for every browser file of an `npm test` run (each file's own start and stop of the
 * browser cost more than its pages did in the short files), and the environment that hands it to them.
 */
export async function startSharedBrowser(): Promise<{ env: Record<string, string>; server: BrowserServer }> {
  const server = await chromium.launchServer(launchOptions());
  return { env: { [SHARED_BROWSER]: server.wsEndpoint() }, server };
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

/** A download's content as text (read through Playwright: the file lies with the shared browser). */
export async function downloadedText(download: Download): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
