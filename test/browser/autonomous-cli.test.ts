// A user whose server lacks the chosen CLI, in a real Chromium against the real API (issue 28 item 3):
// the creation form shows the user's own project folder and, when the CLI is not installed, the API's
// 400 in words (what to install) with nothing created; a workflow that failed five times with
// `spawn claude ENOENT` shows one timeline row with the attempt count and a banner naming the cause
// and the fix; the live feed stays "connected" while the stream sends its own `error` event (which an
// EventSource dispatches under the same name as a dropped connection). One page load per case, the
// session cookie set directly. Screenshots at 1280 px and 390 px under test-artifacts/screenshots/.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { milestonesRepository } from '../../db/repositories/autonomous/milestones.ts';
import { activityBusFor } from '../../services/autonomous/activity-bus.ts';
import { tenantProjectRoot } from '../../services/autonomous/projects.ts';
import { SESSION_COOKIE } from '../../services/session-cookie.ts';
import {
  type ApiWorld,
  createWorkflow,
  setRow,
  startApiWorld,
  terminateRuns,
} from '../integration/autonomous/api-support.ts';
import { launchBrowser, newContext, screenshot, watchErrors } from '../support/browser.ts';

let w: ApiWorld;
let browser: Browser;
const created: string[] = [];
const ENOENT = 'runner_failure: the CLI could not be started: spawn claude ENOENT';

before(async () => {
  w = await startApiWorld();
  browser = await launchBrowser();
});
after(async () => {
  await terminateRuns(w, created).catch(() => undefined);
  await browser?.close();
  await w?.close();
});

/** The owner's page at `path` (one load), its script errors collected. */
async function ownerPage(path: string): Promise<{ page: Page; errors: string[] }> {
  const ctx = await newContext(browser, w.app.url);
  await ctx.addCookies([{ name: SESSION_COOKIE, value: w.owner.token, url: w.app.url }]);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await page.goto(path);
  return { page, errors };
}

/** Screenshots at desktop and phone width (the narrow layout itself is another item of issue 28). */
async function shoot(page: Page, name: string) {
  await screenshot(page, 'autonomous-cli', `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'autonomous-cli', `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

const rowCount = async () =>
  Number(
    (
      await w.app.database.sql.query<{ n: number }>(
        'SELECT (SELECT COUNT(*) FROM autonomous_workflows) + (SELECT COUNT(*) FROM projects) AS n',
      )
    )[0]!.n,
  );

test('the form shows the allowed folder; a CLI that is not installed is refused in words, nothing created', async () => {
  const saved = w.app.settings.autonomous.cli_paths;
  w.app.settings.autonomous.cli_paths = { ...saved, cli_beta: '/nonexistent/claude' };
  try {
    const before = await rowCount();
    const { page, errors } = await ownerPage('/autonomous/new');
    const folder = tenantProjectRoot(`${w.app.settings.SVC_DATA_DIR}/projects`, w.cast.tenantA);
    await page.getByText(`inside your project folder: ${folder}`).waitFor();
    await page.getByLabel('Requirement', { exact: true }).fill('Make app.txt say fixed');
    await page.getByLabel('Project path').fill(w.project.path);
    await page.getByLabel('CLI tool').selectOption('cli_beta');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'cli_beta cannot be run' });
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /npm run clis:install cli_beta.*autonomous\.cli_paths/s);
    assert.equal(new URL(page.url()).pathname, '/autonomous/new', 'still on the form');
    assert.equal(await rowCount(), before, 'nothing created');
    await shoot(page, 'create-cli-missing');
    assert.deepEqual(
      errors.filter((e) => !e.includes('400')),
      [],
    );
  } finally {
    w.app.settings.autonomous.cli_paths = saved;
  }
});

test('five identical failed attempts are one row with the count; the banner names the cause and the fix', async () => {
  const wf = await createWorkflow(w, w.owner, { cli_tool: 'cli_beta' });
  created.push(wf.id);
  const repo = milestonesRepository(w.app.database);
  for (let attempt = 1; attempt <= 5; attempt++) {
    const m = await repo.add(wf.id, { kind: 'plan', phase: 'planning', sessionLine: 'main', attempt });
    await repo.finalize(m.id, { status: 'failed', error: ENOENT, outcome: 'runner_failure' });
  }
  await setRow(w, wf.id, {
    status: 'failed',
    currentPhase: 'planning',
    error: 'runner_failure: 5 attempts failed',
  });
  const { page, errors } = await ownerPage(`/autonomous/${wf.id}`);
  const banner = page.getByTestId('failure-banner');
  await banner.waitFor();
  const words = (await banner.textContent()) ?? '';
  assert.match(words, /The CLI `claude` \(cli_beta\) was not found on the server/);
  assert.match(words, /npm run clis:install.*autonomous\.cli_paths; then Retry/s);
  assert.match(words, /runner_failure: 5 attempts failed/);
  const rows = page.locator('table:has(caption:has-text("Milestone timeline")) tbody tr');
  assert.equal(await rows.count(), 1, 'one row for the five attempts');
  assert.match((await rows.first().textContent()) ?? '', /plan \(5 attempts, all failed the same way\)/);
  assert.equal(await rows.first().getAttribute('data-attempts'), '5');
  assert.ok(await page.getByRole('button', { name: 'Retry' }).isVisible(), 'retry offered, the fix named');
  await shoot(page, 'failed-cli-missing');
  assert.deepEqual(errors, []);
});

test('the live feed stays connected while the stream sends its own error event', async () => {
  const wf = await createWorkflow(w, w.owner, { cli_tool: 'cli_beta' });
  created.push(wf.id);
  const { page, errors } = await ownerPage(`/autonomous/${wf.id}`);
  const state = page.getByText(/^Live activity:/);
  await page.getByText('Live activity: connected').waitFor();
  // Every state the feed shows from here on.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { feedStates: string[] }).feedStates = seen;
    const el = [...document.querySelectorAll('[role=status]')].find((e) =>
      e.textContent?.startsWith('Live activity:'),
    )!;
    new MutationObserver(() => seen.push(el.textContent ?? '')).observe(el, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  const bus = activityBusFor(w.app.database);
  bus.publish({
    workflowId: wf.id,
    line: 'main',
    type: 'error',
    subtype: 'exited',
    text: 'the CLI could not be started: spawn claude ENOENT',
    at: new Date().toISOString(),
  });
  await bus.flush();
  await page.getByText('Error: the CLI could not be started: spawn claude ENOENT').waitFor();
  assert.equal(await state.textContent(), 'Live activity: connected');
  const seen = await page.evaluate(() => (window as unknown as { feedStates: string[] }).feedStates);
  assert.deepEqual(
    seen.filter((s) => !s.endsWith('connected')),
    [],
    'never "reconnecting" while connected',
  );
  await shoot(page, 'live-error-event');
  assert.deepEqual(errors, []);
});
