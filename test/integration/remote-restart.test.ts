// The agent survives a server restart and receives the commands queued while it was away; the session
// workflow survives its worker going away. Instance A (API + worker) serves the agent on a fixed port;
// A is stopped; a chat is posted through instance B (same database, same task queue) while the agent
// cannot reach anyone; A comes back on the same port; the agent reconnects with backoff, receives the
// queued input and the reply reaches the output. Lifecycle changes afterwards run on B's worker.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { freePort } from '../../bin/temporal-dev.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  type AgentProcess,
  assign,
  buildRemoteCast,
  cliPid,
  processState,
  type RemoteCast,
  registrationToken,
  sessionOutput,
  sleep,
  startAgent,
  waitUntil,
} from '../support/remote.ts';
import { api, login } from '../support/session.ts';

let testDb: TestDatabase;
let port: number;
const taskQueue = `restart-${randomBytes(4).toString('hex')}`;
let a: TestApp | undefined;
let b: TestApp | undefined;
let agent: AgentProcess | undefined;
let cast: RemoteCast;

const startA = () =>
  startTestApp({ worker: true, testDb, env: { PORT: String(port), TEMPORAL_TASK_QUEUE: taskQueue } });

before(async () => {
  testDb = await createTestDatabase();
  port = await freePort();
  a = await startA();
  cast = await buildRemoteCast(a);
});
after(async () => {
  await agent?.stop();
  await a?.close();
  await b?.close();
  await testDb?.drop();
});

const replies = async (url: string, sessionId: string) =>
  (await sessionOutput(url, cast.userA.session, sessionId))
    .filter((e) => e.stream === 'stdout')
    .map((e) => e.data as string);

test('agent survives a server restart and gets the commands queued while it was away', async () => {
  const token = await registrationToken(a!.url, cast.admin.session, cast.tenantId);
  agent = startAgent({ serverUrl: a!.url, registrationToken: token });
  const machineId: string = await waitUntil(
    'registration',
    async () => agent!.config().agent_token && agent!.config().machine_id,
    20000,
  );
  await assign(a!.url, cast.admin.session, machineId, cast.userA.id, 'user');
  await waitUntil(
    'online',
    async () =>
      (await api(a!.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.admin.session })).body
        .status === 'online',
  );
  const created = await api(a!.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: mkdtempSync(path.join(os.tmpdir(), 'svc-project-')) },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sessionId = created.body.session_id;
  const pid = await cliPid(a!.url, cast.userA.session, sessionId);
  await api(a!.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'before restart' },
  });
  await waitUntil('first reply', async () =>
    (await replies(a!.url, sessionId)).some((d) => d.includes('echo: before restart')),
  );

  // A goes away (API and worker). B serves the browser meanwhile; the agent still points at A's port.
  await a!.close();
  a = undefined;
  b = await startTestApp({ worker: true, testDb, env: { TEMPORAL_TASK_QUEUE: taskQueue } });
  const userOnB = { ...cast.userA.session };
  const chat = await api(b.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: userOnB,
    body: { content: 'while the server was away' },
  });
  assert.equal(chat.status, 200);
  await sleep(1500);
  const { db, t } = b.database;
  const [queued] = await db
    .select()
    .from(t.remoteRuntimeCommands)
    .where(eq(t.remoteRuntimeCommands.commandId, chat.body.command_id));
  assert.equal(queued!.status, 'pending', 'nobody could deliver it yet');
  assert.equal(processState(pid) !== undefined, true, 'the CLI keeps running while the server is down');

  // A is back on the same port: the agent reconnects and receives the queued input.
  a = await startA();
  await waitUntil(
    'reply to the queued chat',
    async () => (await replies(a!.url, sessionId)).some((d) => d.includes('echo: while the server was away')),
    20000,
  );
  const [delivered] = await db
    .select()
    .from(t.remoteRuntimeCommands)
    .where(eq(t.remoteRuntimeCommands.commandId, chat.body.command_id));
  assert.notEqual(delivered!.status, 'pending');
  assert.equal(
    await cliPid(a!.url, cast.userA.session, sessionId),
    pid,
    'the same CLI process answered: the session was not restarted',
  );

  // The workflow outlived A's worker: lifecycle changes still work (run by B's worker).
  const admin = await login(a!.url, 'admin', 'admin-password-123');
  const paused = await api(a!.url, 'POST', `/api/remote/sessions/${sessionId}/pause`, { auth: admin });
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(processState(pid), 'T');
  assert.equal(
    (await api(b.url, 'POST', `/api/remote/sessions/${sessionId}/resume`, { auth: cast.userA.session }))
      .status,
    200,
  );
  const stopped = await api(b.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, {
    auth: cast.userA.session,
  });
  assert.equal(stopped.status, 200);
  assert.equal(stopped.body.status, 'stopped');
  await waitUntil(
    'CLI gone',
    async () => processState(pid) === undefined || processState(pid) === 'Z',
    10000,
  );
});
