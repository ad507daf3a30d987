// The terminal relay's 3010 hop in a real Chromium (spec document 1, overview item 6): two API instances
// on one PostgreSQL database, a real agent (its pseudo-terminal is script(1) running a real shell)
// polling instance A. One page holds the session's terminal on A, so A owns the relay; a second page,
// opened on instance B, connects to B, is closed with 3010 and A's address, and the web client
// (web/src/pages/remote/terminal-reconnect.ts) reconnects to A by itself: a typed command's echo appears
// in xterm. The instances list each other in SVC_WEB_CONNECT_ORIGINS (B's page may connect to A; A
// accepts B's pages as an Origin). Who else: a user who may not see the session is refused by B with
// the same "Session not found" as for an unknown session, and never learns the owner's address.
// SQLite is one node by definition: its relay registry is in-process, so there is no hop to test there.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { PASSWORD } from '../support/actors.ts';
import { launchBrowser, newContext, screenshot, scrollsSideways, watchErrors } from '../support/browser.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  type AgentProcess,
  buildRemoteCast,
  type RemoteCast,
  startAgentSession,
  waitUntil,
} from '../support/remote.ts';

const SQLITE_SKIP =
  'SQLite: one node by definition, the relay registry is in-process (spec), so two instances cannot share ownership and there is no 3010 hop';
const skip = usingPostgres() ? false : SQLITE_SKIP;

let testDb: TestDatabase;
let a: TestApp;
let b: TestApp;
let cast: RemoteCast;
let agent: AgentProcess;
let browser: Browser;
let sessionId: string;
let projectDir: string;

/** A free loopback port (each instance must know the other's address before it starts). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

before(async () => {
  if (skip) {
    console.log(`# terminal-hop: skipped, ${SQLITE_SKIP}`);
    return;
  }
  testDb = await createTestDatabase();
  const [portA, portB] = [await freePort(), await freePort()];
  const urlA = `http://127.0.0.1:${portA}`;
  const urlB = `http://127.0.0.1:${portB}`;
  const taskQueue = `hop-${randomBytes(4).toString('hex')}`;
  a = await startTestApp({
    worker: true,
    testDb,
    env: { PORT: String(portA), TEMPORAL_TASK_QUEUE: taskQueue, SVC_WEB_CONNECT_ORIGINS: urlB },
  });
  b = await startTestApp({
    testDb,
    migrate: false,
    env: { PORT: String(portB), TEMPORAL_TASK_QUEUE: taskQueue, SVC_WEB_CONNECT_ORIGINS: urlA },
  });
  assert.equal(a.url, urlA);
  assert.equal(b.url, urlB);
  cast = await buildRemoteCast(a);
  ({ agent, sessionId, projectDir } = await startAgentSession(a.url, cast, 'svc-hop-project-'));
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await agent?.stop();
  await a?.close();
  await b?.close();
  await testDb?.drop();
});

/** A page signed in on `app` through the login form; the WebSocket URLs it opens are recorded. */
async function signedIn(app: TestApp, username: string) {
  const ctx = await newContext(browser, app.url);
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  const sockets: string[] = [];
  page.on('websocket', (ws) => {
    if (ws.url().includes('/terminal')) sockets.push(ws.url());
  });
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  return { page, errors, sockets };
}

const terminalPage = (page: Page) => page.goto(`/remote/sessions/${encodeURIComponent(sessionId)}/terminal`);
const wsOf = (app: TestApp) => app.url.replace('http:', 'ws:');

test('a terminal opened on the non-owning instance is redirected (3010) to the owner and echoes there', {
  skip,
}, async () => {
  // The owner: a terminal held on A.
  const owner = await signedIn(a, cast.userA.session.user.username);
  await terminalPage(owner.page);
  await owner.page.getByRole('status').getByText('Connected').waitFor();
  await owner.page.locator('.xterm').click();
  await owner.page.keyboard.type('echo owner-$((3+3))\n');
  await owner.page.locator('.xterm-rows', { hasText: 'owner-6' }).waitFor();
  const rows = await a.database.sql.query<{ instance_url: string }>(
    'SELECT instance_url FROM terminal_relays WHERE session_id = ?',
    [sessionId],
  );
  assert.deepEqual(rows, [{ instance_url: a.url }], 'A registered itself as the owner');
  await screenshot(owner.page, 'terminal-hop', 'owner-on-a');

  // The same person on instance B: B answers 3010 {owner: A}, the page reconnects to A by itself.
  const hop = await signedIn(b, cast.userA.session.user.username);
  await terminalPage(hop.page);
  // The socket to B opens (the refusal is a close frame after the upgrade), then closes with 3010.
  await waitUntil('the reconnect to the owner', async () => hop.sockets.length >= 2, 15_000);
  await hop.page.getByRole('status').getByText('Connected').waitFor();
  assert.equal(hop.sockets.length, 2, hop.sockets.join('\n'));
  assert.ok(hop.sockets[0]!.startsWith(`${wsOf(b)}/api/remote/sessions/`), hop.sockets[0]);
  assert.ok(hop.sockets[1]!.startsWith(`${wsOf(a)}/api/remote/sessions/`), hop.sockets[1]);
  await hop.page.locator('.xterm').click();
  await hop.page.keyboard.type('echo hopped-$((20+22)); pwd\n');
  await hop.page.locator('.xterm-rows', { hasText: 'hopped-42' }).waitFor();
  await hop.page.locator('.xterm-rows', { hasText: projectDir }).waitFor();
  assert.equal(new URL(hop.page.url()).origin, b.url, 'the page itself stays on B');
  assert.equal(await scrollsSideways(hop.page), false);
  await screenshot(hop.page, 'terminal-hop', 'hopped-from-b-to-a');
  // Terminal history is not shared between the two terminals: each is its own shell.
  assert.equal(await hop.page.locator('.xterm-rows', { hasText: 'owner-6' }).count(), 0);
  assert.deepEqual(owner.errors, []);
  assert.deepEqual(hop.errors, [], 'no CSP violation or console error on the hop');
  // Nothing typed reached a log line of either instance.
  assert.ok(!`${a.logs.join('')}${b.logs.join('')}`.includes('hopped-$'));

  // Someone assigned to the machine but not the session's owner, on B: refused in words, no hop.
  const other = await signedIn(b, cast.userB.session.user.username);
  await terminalPage(other.page);
  await other.page.getByRole('status').getByText('The terminal closed: Session not found').waitFor();
  assert.equal(other.sockets.length, 1, other.sockets.join('\n'));
  assert.ok(other.sockets[0]!.startsWith(wsOf(b)));
  await screenshot(other.page, 'terminal-hop', 'refused-on-b');

  await hop.page.close();
  await owner.page.close();
});
