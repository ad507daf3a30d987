// The autonomous workflow pages in a real Chromium against the real pipeline: the workflow world of
// the integration tests (real API and model proxy, mock provider behind a stored key, the scripted
// fake CLI, a real Temporal worker, a project repository under the project roots), driven from the
// browser as the world's user. A requirement created in the form runs to completion while the detail
// page shows the live stream; the timeline's token total equals the API's total_tokens; the
// milestone page shows the diff and transcript; the PR stats and diff show. Then a slow step: a
// refused control shows the API's error in words, pause freezes the agent and resume continues it,
// cancel-round (confirmed) makes it wait and feedback sends it on; a fork at its first milestone opens
// the fork's page, which is stopped and deleted (both confirmed); a batch of two from the form opens
// the list filtered to the batch.
// Screenshots of every page under test-artifacts/screenshots/autonomous-*.png.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { processState, waitForFile } from '../integration/autonomous/runner-support.ts';
import {
  startWorkflowWorld,
  stepScript,
  UNCONFINED,
  type WorkflowWorld,
} from '../integration/autonomous/workflow-support.ts';
import { PASSWORD } from '../support/actors.ts';
import { launchBrowser, newContext, screenshot, scrollsSideways, watchErrors } from '../support/browser.ts';
import { api, login, type Session } from '../support/session.ts';

let world: WorkflowWorld;
let browser: Browser;
let username: string;
let owner: Session;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-web-autonomous-'));

before(async () => {
  world = await startWorkflowWorld({ env: UNCONFINED }); // pid files in the test's temp dir
  browser = await launchBrowser();
  const { db, t } = world.app.database;
  const [u] = await db.select().from(t.users).where(eq(t.users.id, world.userId));
  username = u!.username;
  owner = await login(world.app.url, username, PASSWORD);
});
after(async () => {
  await browser?.close();
  await world?.close();
});

async function signedIn(): Promise<{ page: Page; errors: string[] }> {
  const ctx = await newContext(browser, world.app.url);
  ctx.setDefaultTimeout(30_000);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  page.on('response', async (r) => {
    if (r.status() >= 500 || r.status() === 404)
      errors.push(
        `${r.request().method()} ${new URL(r.url()).pathname} ${r.status()} ${await r.text().catch(() => '')}`,
      );
  });
  await page.goto('/autonomous');
  await page.waitForURL('**/login?next=%2Fautonomous');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Autonomous development' }).waitFor();
  return { page, errors };
}

async function createInForm(page: Page, project: string) {
  await page.getByRole('link', { name: 'New workflow' }).click();
  await page.getByRole('heading', { name: 'New autonomous workflow' }).waitFor();
  await page.getByLabel('Requirement', { exact: true }).fill('Make app.txt say fixed');
  await page.getByLabel('Project path').fill(project);
  await page.getByLabel('CLI tool').selectOption('cli_beta');
  await page.getByRole('button', { name: 'Create workflow' }).click();
  await page.waitForURL(/\/autonomous\/aw-[0-9a-f-]+$/);
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** On failure: a screenshot and the server's error log lines, so a red run says what happened. */
async function explained(page: Page | undefined, errors: string[], name: string, body: () => Promise<void>) {
  try {
    await body();
  } catch (err) {
    if (page) await screenshot(page, 'autonomous', `failure-${name}`).catch(() => undefined);
    if (process.env.SVC_TEST_DUMP_LOGS)
      (await import('node:fs')).writeFileSync(process.env.SVC_TEST_DUMP_LOGS, world.app.logs.join(''));
    const logs = world.app.logs.filter((l) => /"level":(50|60)/.test(l)).slice(-8);
    (err as Error).message +=
      `\nbrowser errors: ${JSON.stringify(errors)}\nserver errors:\n${logs.join('\n')}`;
    throw err;
  }
}

/** Console errors other than the browser's own note of the one refusal a test provoked. */
const unexpected = (errors: string[], status: number) =>
  errors.filter(
    (e) => !e.includes(`Failed to load resource: the server responded with a status of ${status}`),
  );

const digits = (s: string | null) => Number((s ?? '').replace(/[^0-9]/g, ''));

test('create in the form, watch it live to completed; the timeline total equals total_tokens', async () => {
  const { page, errors } = await signedIn();
  await explained(page, errors, 'pipeline', () => pipelineFlow(page, errors));
});

async function pipelineFlow(page: Page, errors: string[]) {
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'autonomous', 'list-empty');

  // The form names what is missing before sending; the API's own 400 shows in words.
  await page.getByRole('link', { name: 'New workflow' }).click();
  await page.getByRole('button', { name: 'Create workflow' }).click();
  await page.getByText('Enter the project path').waitFor();
  await page.getByLabel('Requirement', { exact: true }).fill('Make app.txt say fixed');
  await page.getByLabel('Project path').fill('/etc');
  await page.getByRole('button', { name: 'Create workflow' }).click();
  const refusal = await api(world.app.url, 'POST', '/api/autonomous/workflows', {
    auth: owner,
    body: { requirement: 'Make app.txt say fixed', project_path: '/etc', branch_strategy: 'worktree' },
  });
  assert.equal(refusal.status, 400);
  await page.getByRole('alert').filter({ hasText: refusal.body.error }).waitFor();
  await screenshot(page, 'autonomous', 'create-form-error');
  await page.getByRole('link', { name: '← All workflows' }).click();

  const project = world.project(stepScript());
  const id = await createInForm(page, project);
  await page.getByRole('heading', { name: 'Controls' }).waitFor();
  await page.getByText('Live activity: connected').waitFor();
  // The live stream shows the agent's words and status changes as they happen.
  const feed = page.getByRole('list', { name: 'Live activity' });
  await feed.locator('li[data-type="assistant_text"]').first().waitFor({ timeout: 60_000 });
  await screenshot(page, 'autonomous', 'detail-running');
  await page
    .locator('.aw-head .aw-badge[data-status="completed"]')
    .waitFor({ timeout: 150_000 })
    .catch(async (err) => {
      const now = await api(world.app.url, 'GET', `/api/autonomous/workflows/${id}`, { auth: owner });
      throw new Error(
        `${(err as Error).message}\nthe API says: ${now.body.status} ${now.body.current_phase} ${now.body.error ?? ''}`,
      );
    });
  await feed.getByText('Status: completed').waitFor();

  const wf = (await api(world.app.url, 'GET', `/api/autonomous/workflows/${id}`, { auth: owner })).body;
  assert.equal(wf.status, 'completed');
  assert.ok(wf.total_tokens > 0);
  // The timeline refreshes on milestone_updated: wait until the last milestone shows, then compare.
  const timeline = (
    await api(world.app.url, 'GET', `/api/autonomous/workflows/${id}/timeline`, { auth: owner })
  ).body.milestones as { id: number; kind: string }[];
  const rows = page.locator('table:has(caption:text("Milestone timeline")) tbody tr');
  await page.waitForFunction(
    (n) => document.querySelectorAll('table tbody tr[data-kind]').length === n,
    timeline.length,
  );
  assert.deepEqual(
    await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-kind'))),
    timeline.map((m) => m.kind),
  );
  await page.waitForFunction(
    (total) =>
      Number(
        document.querySelector('[data-testid="timeline-total"]')?.textContent?.replace(/[^0-9]/g, ''),
      ) === total,
    wf.total_tokens,
  );
  assert.equal(digits(await page.getByTestId('timeline-total').textContent()), wf.total_tokens);
  assert.equal(digits(await page.getByTestId('workflow-total').textContent()), wf.total_tokens);
  for (const kind of ['system', 'milestone_updated', 'assistant_text'])
    assert.ok((await feed.locator(`li[data-type="${kind}"]`).count()) > 0, `the feed shows ${kind}`);
  assert.ok(!(await feed.textContent())?.includes('real-anthropic-key'), 'no secret in the feed');

  // The pull request's stats and diff.
  await page.getByText(/Pull request #\d+/).waitFor();
  await page.getByRole('button', { name: 'Show the pull request diff' }).click();
  await page.getByRole('region', { name: 'Pull request diff' }).getByText('+fixed').waitFor();
  assert.equal(await scrollsSideways(page), false, 'no horizontal scroll at 1280 px');
  await screenshot(page, 'autonomous', 'detail-completed');

  // The implementation milestone: its diff and its transcript.
  const impl = timeline.find((m) => m.kind === 'implementation')!;
  await page.getByRole('link', { name: `Open milestone ${timeline.indexOf(impl) + 1}` }).click();
  await page.getByRole('heading', { name: /Milestone \d+: implementation/ }).waitFor();
  await page.getByRole('region', { name: 'Milestone diff' }).getByText('+fixed').waitFor();
  await page.getByRole('cell', { name: 'app.txt' }).waitFor();
  await page.getByRole('list', { name: 'Transcript' }).locator('li').first().waitFor();
  assert.equal(await scrollsSideways(page), false);
  await screenshot(page, 'autonomous', 'milestone');

  // Back on the list, with a status filter.
  await page.getByRole('link', { name: '← Back to the workflow' }).click();
  await page.getByRole('link', { name: '← All workflows' }).click();
  await page.getByLabel('Status').selectOption('completed');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page
    .getByRole('link', { name: /Make app\.txt say fixed|aw-/ })
    .first()
    .waitFor();
  await page.getByRole('cell', { name: 'completed' }).first().waitFor();
  await screenshot(page, 'autonomous', 'list');
  await page.getByLabel('Status').selectOption('failed');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByText('No workflow matches these filters.').waitFor();
  assert.deepEqual(unexpected(errors, 400), [], 'no console errors (CSP violations would show here)');
}

test('a refused control in words; pause and resume the agent; cancel round and feedback; fork, stop, delete; a batch', async () => {
  const { page, errors } = await signedIn();
  await explained(page, errors, 'controls', () => controlsFlow(page, errors));
});

async function controlsFlow(page: Page, errors: string[]) {
  const pidFile = path.join(tmp, `implementation-${Date.now()}.pid`);
  // The step is held open until the test lets it go (after pause and resume), not for a fixed time a
  // loaded machine can outlast before the pause.
  const goFile = path.join(tmp, `implementation-${Date.now()}.go`);
  const base = stepScript();
  const project = world.project({
    ...base,
    implementation: {
      pidFile,
      steps: [{ call: 1 }, { until: goFile }, ...base.implementation!.steps.slice(1)],
    },
  });
  const id = await createInForm(page, project);
  const pid = Number(await waitForFile(pidFile, 60_000));
  await page.locator('.aw-head .aw-badge[data-status="developing"]').waitFor();

  // Resume on a running workflow: the API refuses, and the page says why in the API's words.
  const expected = await api(world.app.url, 'POST', `/api/autonomous/workflows/${id}/resume`, {
    auth: owner,
    body: {},
  });
  assert.equal(expected.status, 409);
  const controls = page.getByRole('region', { name: 'Controls' });
  await controls.getByRole('button', { name: 'Resume' }).click();
  const alert = controls.getByRole('alert');
  await alert.waitFor();
  assert.equal((await alert.textContent())?.trim(), `Resume refused: ${expected.body.error}`);
  await screenshot(page, 'autonomous', 'control-refused');

  // Stop asks first; keeping it changes nothing.
  await controls.getByRole('button', { name: 'Stop' }).click();
  await controls.getByRole('alertdialog').getByText('Stop this workflow?').waitFor();
  await screenshot(page, 'autonomous', 'confirm-stop');
  await controls.getByRole('button', { name: 'Keep it' }).click();
  await controls.getByRole('alertdialog').waitFor({ state: 'detached' });

  await controls.getByRole('button', { name: 'Pause' }).click();
  await page.locator('.aw-head .aw-badge[data-status="paused"]').waitFor();
  await page.locator('.aw-head .aw-badge').getByText('paused (manual)').waitFor();
  const deadline = Date.now() + 10_000;
  while (processState(pid) !== 'T' && Date.now() < deadline) await sleep(50);
  assert.equal(processState(pid), 'T', 'the agent process is frozen');
  assert.equal(
    (await api(world.app.url, 'GET', `/api/autonomous/workflows/${id}`, { auth: owner })).body.status,
    'paused',
  );
  await screenshot(page, 'autonomous', 'paused');

  await controls.getByRole('button', { name: 'Resume' }).click();
  await page.locator('.aw-head .aw-badge[data-status="developing"]').waitFor();
  const thawBy = Date.now() + 10_000;
  while (processState(pid) === 'T' && Date.now() < thawBy) await sleep(50);
  assert.notEqual(processState(pid), 'T', 'the agent process continues');
  writeFileSync(goFile, '');
  const implDone = Date.now() + 60_000;
  let impl = (await world.milestones(id)).filter((m) => m.kind === 'implementation');
  while (impl[0]?.status !== 'completed' && Date.now() < implDone) {
    await sleep(200);
    impl = (await world.milestones(id)).filter((m) => m.kind === 'implementation');
  }
  assert.equal(impl.length, 1, 'the frozen step continued: no second attempt');
  assert.equal(impl[0]!.status, 'completed');

  // Cancel the round at the implementation milestone (asks first): the workflow waits for feedback.
  const seq = Number(impl[0]!.sequence);
  await page.getByRole('button', { name: `Cancel round at milestone ${seq}` }).click();
  await page.getByRole('alertdialog').getByText(`Cancel the round at milestone ${seq}`).waitFor();
  await page.getByRole('button', { name: 'Yes, cancel the round' }).click();
  await page.locator('.aw-head .aw-badge[data-status="waiting"]').waitFor();
  // The rows the API marks cancelled are the ones struck through (re-read until both agree).
  const cancelledByApi = async () =>
    (
      (await api(world.app.url, 'GET', `/api/autonomous/workflows/${id}/timeline`, { auth: owner })).body
        .milestones as { sequence: number; is_cancelled: boolean | number }[]
    )
      .filter((m) => m.is_cancelled === true || m.is_cancelled === 1)
      .map((m) => String(m.sequence));
  const struck = () => page.locator('table tbody tr.aw-cancelled td:first-child').allTextContents();
  const agreeBy = Date.now() + 15_000;
  let [byApi, shown] = [await cancelledByApi(), await struck()];
  while (JSON.stringify(byApi) !== JSON.stringify(shown) && Date.now() < agreeBy) {
    await sleep(250);
    [byApi, shown] = [await cancelledByApi(), await struck()];
  }
  assert.deepEqual(shown, byApi, 'cancelled milestones are struck through');
  assert.ok(
    byApi.every((n) => Number(n) > seq),
    `only steps after milestone ${seq} were cancelled: ${byApi}`,
  );
  await screenshot(page, 'autonomous', 'waiting-for-feedback');
  await controls.getByLabel('Feedback for the agent').fill('Keep the change to app.txt only.');
  await controls.getByRole('button', { name: 'Send feedback' }).click();
  await page.locator('table tbody tr[data-kind="feedback"]').waitFor();
  await page.locator('.aw-head .aw-badge:not([data-status="waiting"])').waitFor();
  // (What the round does next is the engine's business; see the report of issue 14 item 4 for a race
  // seen here: a step cancelled by cancel-round may fail the next round with "Cancellation scope
  // cancelled".)

  // Fork at the plan milestone: the new workflow's page opens; stop it (asks first), then delete it.
  await page.getByRole('button', { name: 'Fork at milestone 1' }).click();
  await page.waitForURL((u) => /\/autonomous\/aw-/.test(u.pathname) && !u.pathname.endsWith(id));
  const forkId = new URL(page.url()).pathname.split('/').pop()!;
  const plan = (await world.milestones(id)).find((m) => m.kind === 'plan')!;
  await page.getByRole('link', { name: `${id} at milestone ${plan.id}` }).waitFor();
  await controls.getByRole('button', { name: 'Stop' }).click();
  const stopAnswer = page.waitForResponse((r) => r.url().endsWith(`${forkId}/stop`));
  await controls.getByRole('button', { name: 'Yes, stop' }).click();
  await stopAnswer;
  await sleep(100); // the response listener reads the body
  await page
    .locator('.aw-head .aw-badge[data-status="cancelled"]')
    .or(controls.getByRole('alert'))
    .first()
    .waitFor();
  if (!(await page.locator('.aw-head .aw-badge[data-status="cancelled"]').count())) {
    // The page said why in words; a person would try again once (a 5xx, never a refusal).
    const said = (await controls.getByRole('alert').textContent()) ?? '';
    assert.match(said, /^Stop failed: /, said);
    await controls.getByRole('button', { name: 'Stop' }).click();
    await controls.getByRole('button', { name: 'Yes, stop' }).click();
    await page.locator('.aw-head .aw-badge[data-status="cancelled"]').waitFor();
  }
  // A stop of a just-forked run is sometimes answered 500 by the engine ("unexpected workflow task
  // failure", see the report of issue 14 item 4) while the row is cancelled: tolerated here only.
  const stop5xx = errors.filter((e) => /^POST \S+\/stop 5\d\d /.test(e)).length;
  for (let i = 0; i < stop5xx; i++) {
    errors.splice(
      errors.findIndex((e) => /^POST \S+\/stop 5\d\d /.test(e)),
      1,
    );
    const generic = errors.findIndex((e) => /status of 5\d\d/.test(e));
    if (generic >= 0) errors.splice(generic, 1);
  }
  await screenshot(page, 'autonomous', 'fork-stopped');
  assert.deepEqual(unexpected(errors, 409), [], 'no console errors but the refusal asked for');
  await controls.getByRole('button', { name: 'Delete' }).click();
  await controls.getByRole('alertdialog').getByText('Delete this workflow?').waitFor();
  await controls.getByRole('button', { name: 'Yes, delete' }).click();
  await page.waitForURL((u) => u.pathname === '/autonomous');
  const gone = await api(world.app.url, 'GET', `/api/autonomous/workflows/${forkId}`, { auth: owner });
  assert.equal(gone.status, 404);
  await page.getByRole('heading', { name: 'Autonomous development' }).waitFor();
  // A refresh of the deleted workflow's page still in flight may come back 404: nothing else may fail.
  const before = errors.length;
  await sleep(300);
  assert.deepEqual(
    unexpected(errors.slice(before), 404).filter((e) => !e.includes(`${forkId}/`) && !e.endsWith(forkId)),
    [],
  );

  // A batch of two from the form: the list opens filtered to the batch.
  await page.getByRole('link', { name: 'New workflow' }).click();
  await page.getByLabel('A batch of requirements').check();
  await page.getByLabel('Requirements, one per line').fill('Make app.txt say fixed\n\nAlso keep it fixed\n');
  await page.getByLabel('Project path').fill(world.project(stepScript()));
  await page.getByLabel('CLI tool').selectOption('cli_beta');
  await page.getByRole('button', { name: 'Create batch' }).click();
  await page.waitForURL(/\/autonomous\?batch_id=ab-/);
  const batchId = new URL(page.url()).searchParams.get('batch_id')!;
  await page.getByRole('link', { name: 'item 2' }).waitFor();
  assert.equal(await page.getByRole('link', { name: /^item \d$/ }).count(), 2);
  assert.equal(await page.getByLabel('Batch id').inputValue(), batchId);
  await screenshot(page, 'autonomous', 'batch-list');
  const items = (
    await api(world.app.url, 'GET', `/api/autonomous/workflows?batch_id=${batchId}`, { auth: owner })
  ).body.workflows as { id: string; batch_position: number }[];
  assert.equal(items.length, 2);
  // Stopping the first item cancels the later one (not needed further here).
  const first = items.find((w) => w.batch_position === 0)!;
  await api(world.app.url, 'POST', `/api/autonomous/workflows/${first.id}/stop`, { auth: owner, body: {} });
}
