// The remote workspace pages in a real Chromium against the real API and Temporal worker, with a
// scripted agent (test/support/remote.ts) standing in for the machine: start a session from the UI,
// send a chat message (the agent receives it), output pushed by the agent appears live, a reload
// mid-stream replays from the stored buffer with nothing lost or doubled, a permission prompt is
// answered from the UI, pause/resume/stop drive the session, and a user not on the machine is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { PASSWORD } from '../support/actors.ts';
import { launchBrowser, newContext, screenshot, scrollsSideways, watchErrors } from '../support/browser.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  cliPid,
  type FakeMachine,
  type RemoteCast,
  registerFakeMachine,
  scriptedAgent,
  startAssignedAgent,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let browser: Browser;
let cast: RemoteCast;
let machine: FakeMachine;
let agent: ReturnType<typeof scriptedAgent>;

before(async () => {
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, machine); // online before the page lists available machines
  agent = scriptedAgent(app.url, machine);
  assert.equal(
    (await assign(app.url, cast.admin.session, machine.machineId, cast.userA.id, 'user')).status,
    200,
  );
  browser = await launchBrowser();
});
after(async () => {
  await agent?.stop();
  await browser?.close();
  await app?.close();
});

async function signedIn(username: string): Promise<{ page: Page; errors: string[] }> {
  const ctx = await newContext(browser, app.url);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  return { page, errors };
}

const assistantLine = (text: string) =>
  JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] } });

let seq = 0;
async function agentOutput(sessionId: string, items: { stream?: string; data: string }[]) {
  const r = await agentMessage(app.url, machine, {
    events: items.map((it) => ({
      type: 'output',
      session_id: sessionId,
      run_id: 'browser-run',
      seq: ++seq,
      stream: it.stream ?? 'stdout',
      data: it.data,
      timestamp: new Date().toISOString(),
    })),
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

const replyTexts = (page: Page) => page.locator('.remote-line-assistant .remote-line-text').allTextContents();

test('remote session from the UI: create, chat, live output, reload mid-stream, permission, controls', async () => {
  const { page, errors } = await signedIn(cast.userA.session.user.username);
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Remote workspace' })
    .click();
  await page.getByRole('heading', { name: 'Remote workspace' }).waitFor();
  await page.getByText('No remote sessions yet.').waitFor();
  // Wrong input first: the API's refusal in words.
  await page.getByLabel('Project path').fill('relative/path');
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.locator('.error-box').first().waitFor();
  await screenshot(page, 'remote', 'workspace-error');

  assert.equal(await page.getByLabel('Machine').inputValue(), machine.machineId);
  assert.equal(await page.getByLabel('Tool').inputValue(), 'cli_alpha');
  await page.getByLabel('Project path').fill('/tmp');
  await page.getByLabel('Title').fill('Browser session');
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.waitForURL('**/remote/sessions/*');
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  await page.getByRole('heading', { name: 'Browser session' }).waitFor();
  await page.getByTestId('session-status').getByText('active').waitFor();

  // Chat: the machine receives the message.
  await page.getByLabel('Message', { exact: true }).fill('hello from the browser');
  await page.getByRole('button', { name: 'Send' }).click();
  await waitUntil('the chat command', async () =>
    agent.received.find(
      (c) => c.command_type === 'session.input' && c.payload?.content === 'hello from the browser',
    ),
  );
  // The box empties once the API has answered (the agent may see the command before that answer).
  await waitUntil(
    'the message box to empty after sending',
    async () => (await page.getByLabel('Message', { exact: true }).inputValue()) === '',
  );

  // Live output, then a reload while the agent keeps writing.
  await agentOutput(
    sessionId,
    [1, 2, 3, 4, 5].map((i) => ({ data: assistantLine(`reply ${i}`) })),
  );
  await page.getByText('reply 5', { exact: true }).waitFor();
  const reloading = page.reload();
  await agentOutput(
    sessionId,
    [6, 7, 8].map((i) => ({ data: assistantLine(`reply ${i}`) })),
  );
  await reloading;
  await agentOutput(
    sessionId,
    [9, 10].map((i) => ({ data: assistantLine(`reply ${i}`) })),
  );
  await page.getByText('reply 10', { exact: true }).waitFor();
  await agentOutput(
    sessionId,
    [11, 12].map((i) => ({ data: assistantLine(`reply ${i}`) })),
  );
  await page.getByText('reply 12', { exact: true }).waitFor();
  assert.deepEqual(
    await replyTexts(page),
    Array.from({ length: 12 }, (_, i) => `reply ${i + 1}`),
    'every line once, in order, after the reload',
  );
  await screenshot(page, 'remote', 'session-chat');

  // A permission prompt answered from the UI reaches the machine as session.permission_response.
  await agentOutput(sessionId, [
    {
      stream: 'permission',
      data: JSON.stringify({
        type: 'control_request',
        request_id: 'perm-1',
        request: { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' } },
      }),
    },
  ]);
  await page.getByRole('heading', { name: 'Permission requests' }).waitFor();
  await screenshot(page, 'remote', 'session-permission');
  await page.getByRole('button', { name: 'Allow' }).click();
  const answer = await waitUntil('the permission answer', async () =>
    agent.received.find((c) => c.command_type === 'session.permission_response'),
  );
  assert.deepEqual(answer.payload, { request_id: 'perm-1', decision: 'allow' });
  await page.getByRole('heading', { name: 'Permission requests' }).waitFor({ state: 'detached' });

  // Model change reaches the machine.
  await page.getByLabel('New model').fill('model-two');
  await page.getByRole('button', { name: 'Change model' }).click();
  await page.getByText('Model changed').waitFor();
  await page.locator('dd', { hasText: 'model-two' }).waitFor();

  // Controls: pause, resume, stop.
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByTestId('session-status').getByText('paused').waitFor();
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.getByTestId('session-status').getByText('active').waitFor();
  assert.equal(await scrollsSideways(page), false, 'no horizontal scroll at 1280 px');
  await page.getByRole('button', { name: 'Stop session' }).click();
  await page.getByTestId('session-status').getByText('stopped').waitFor();
  await page.getByText('This session has ended').waitFor();
  assert.deepEqual(
    await replyTexts(page),
    Array.from({ length: 12 }, (_, i) => `reply ${i + 1}`),
  );
  await screenshot(page, 'remote', 'session-stopped');

  // The list shows it.
  await page.goto('/remote');
  await page.getByRole('link', { name: 'Browser session' }).waitFor();
  await screenshot(page, 'remote', 'workspace-list');
  assert.deepEqual(
    errors.filter((e) => !/status of 4\d\d/.test(e)),
    [],
  );

  // Someone not on the machine: no machine to pick, and the session page refuses in words.
  const other = await signedIn(cast.userB.session.user.username);
  await other.page.goto(`/remote/sessions/${sessionId}`);
  await other.page.locator('.error-box').first().waitFor();
  await other.page.goto('/remote');
  await other.page.getByText('No machine is available to you right now.').waitFor();
});

test('terminal page: xterm on the relay runs a command on the machine (real agent, real shell)', async () => {
  const { agent: real, machineId } = await startAssignedAgent(app.url, cast);
  try {
    const projectDir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-web-term-')));
    const created = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: cast.userA.session,
      body: { machine_id: machineId, project_path: projectDir },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const sessionId: string = created.body.session_id;
    await cliPid(app.url, cast.userA.session, sessionId);

    const { page, errors } = await signedIn(cast.userA.session.user.username);
    await page.goto(`/remote/sessions/${sessionId}`);
    await page.getByRole('link', { name: 'Terminal' }).click();
    await page.waitForURL('**/terminal');
    await page.getByRole('status').getByText('Connected').waitFor();
    await page.locator('.xterm').click();
    await page.keyboard.type('echo hi-$((40+2)); pwd\n');
    await page.locator('.xterm-rows', { hasText: 'hi-42' }).waitFor();
    await page.locator('.xterm-rows', { hasText: projectDir }).waitFor();
    await screenshot(page, 'remote', 'terminal');
    assert.equal(await scrollsSideways(page), false);
    // Stopping the session closes the terminal with a message in words.
    assert.equal(
      (await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, { auth: cast.userA.session }))
        .status,
      200,
    );
    await page.getByRole('status').getByText('The terminal closed').waitFor();
    assert.deepEqual(errors, []);
  } finally {
    await real.stop();
  }
});
