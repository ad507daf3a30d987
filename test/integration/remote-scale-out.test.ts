// Scale-out: two API instances on one database. The agent polls instance A; the browser talks to
// instance B only. B's chat wakes A's held long poll (PostgreSQL LISTEN/NOTIFY: each instance has its
// own in-process emitter, so nothing else could), A's stored output reaches B's SSE stream, and polls
// fired at both instances at once never deliver a command twice. The cross-instance wake-up needs
// PostgreSQL; the concurrent-claim test also runs on a shared SQLite file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { EventSource } from 'eventsource';
import { remoteCommands } from '../../services/remote-commands.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  type AgentProcess,
  agentMessage,
  assign,
  buildRemoteCast,
  cliPid,
  type RemoteCast,
  registerFakeMachine,
  registrationToken,
  sleep,
  startAgent,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let testDb: TestDatabase;
let a: TestApp;
let b: TestApp;
let cast: RemoteCast;
let agent: AgentProcess | undefined;
const pgOnly = {
  skip: usingPostgres()
    ? false
    : 'cross-instance wake-up uses PostgreSQL LISTEN/NOTIFY (run with DATABASE_URL)',
};

before(async () => {
  testDb = await createTestDatabase();
  const taskQueue = `scale-${randomBytes(4).toString('hex')}`;
  a = await startTestApp({ worker: true, testDb, env: { TEMPORAL_TASK_QUEUE: taskQueue } });
  b = await startTestApp({ worker: true, testDb, env: { TEMPORAL_TASK_QUEUE: taskQueue }, migrate: false });
  cast = await buildRemoteCast(a);
});
after(async () => {
  await agent?.stop();
  await a?.close();
  await b?.close();
  await testDb?.drop();
});

test(
  'a command queued on instance B wakes the long poll held by instance A within milliseconds',
  pgOnly,
  async () => {
    const machine = await registerFakeMachine(a.url, cast.admin.session, cast.tenantId);
    await agentMessage(a.url, machine); // A has opened its LISTEN connection by now
    await sleep(200);
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const poll = agentMessage(a.url, machine, { wait_ms: 20_000 });
      await sleep(300);
      const queuedAt = Date.now();
      const { commandId } = await remoteCommands({
        database: b.database,
        settings: b.settings,
        now: b.clock.now,
      }).queue({ machineId: machine.machineId, commandType: 'ping' });
      const r = await poll;
      latencies.push(Date.now() - queuedAt);
      assert.deepEqual(
        r.body.commands.map((c: any) => c.command_id),
        [commandId],
      );
    }
    // The safety re-check runs every 5 s; a wake-up well under that can only be the notification.
    console.log(`cross-instance wake-up latencies (ms): ${latencies.join(', ')}`);
    assert.ok(Math.max(...latencies) < 1500, `cross-instance wake-ups took ${latencies.join(', ')} ms`);
  },
);

test('polls fired at both instances at once never deliver a command twice', async () => {
  const machine = await registerFakeMachine(a.url, cast.admin.session, cast.tenantId);
  const q = remoteCommands({ database: b.database, settings: b.settings, now: b.clock.now });
  const queued = new Set<string>();
  for (let i = 0; i < 300; i++)
    queued.add(
      (await q.queue({ machineId: machine.machineId, commandType: 'ping', payload: { i } })).commandId,
    );
  const polls = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      agentMessage(i % 2 ? a.url : b.url, machine, { wait_ms: i % 3 ? 0 : 300 }),
    ),
  );
  const delivered = polls.flatMap((p) => p.body.commands.map((c: any) => c.command_id as string));
  for (;;) {
    const more = await agentMessage(a.url, machine);
    if (!more.body.commands.length) break;
    delivered.push(...more.body.commands.map((c: any) => c.command_id));
  }
  assert.equal(delivered.length, 300, 'no duplicates');
  assert.deepEqual(new Set(delivered), queued);
});

test('agent on instance A, browser on instance B: create, chat, live SSE output, stop', pgOnly, async () => {
  const token = await registrationToken(b.url, cast.admin.session, cast.tenantId);
  agent = startAgent({ serverUrl: a.url, registrationToken: token });
  const machineId: string = await waitUntil(
    'registration',
    async () => agent!.config().agent_token && agent!.config().machine_id,
    20000,
  );
  await assign(b.url, cast.admin.session, machineId, cast.userA.id, 'user');
  await waitUntil(
    'online (seen from B)',
    async () =>
      (await api(b.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.userA.session })).body
        .status === 'online',
  );
  const created = await api(b.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: mkdtempSync(path.join(os.tmpdir(), 'svc-project-')) },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sessionId = created.body.session_id;
  await cliPid(b.url, cast.userA.session, sessionId);

  const received: any[] = [];
  const es = new EventSource(`${b.url}/api/remote/sessions/${sessionId}/output/stream`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), ...cast.userA.session.headers },
      }),
  });
  es.addEventListener('output', (e) => received.push(JSON.parse(e.data)));
  try {
    await waitUntil('replay on B', async () => received.length > 0);
    const chatAt = Date.now();
    const chat = await api(b.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
      auth: cast.userA.session,
      body: { content: 'across instances' },
    });
    assert.equal(chat.status, 200);
    await waitUntil(
      'reply on B via SSE',
      async () => received.some((e) => e.data.includes('echo: across instances')),
      10000,
      5,
    );
    const elapsed = Date.now() - chatAt;
    assert.ok(elapsed < 3000, `chat on B -> agent on A -> CLI -> A -> SSE on B took ${elapsed} ms`);
    const { db, t } = a.database;
    const [cmd] = await db
      .select()
      .from(t.remoteRuntimeCommands)
      .where(eq(t.remoteRuntimeCommands.commandId, chat.body.command_id));
    assert.ok(
      cmd!.deliveredAt!.getTime() - cmd!.createdAt.getTime() < 1500,
      'the held poll on A was woken by B',
    );
  } finally {
    es.close();
  }
  const stopped = await api(b.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, {
    auth: cast.userA.session,
  });
  assert.equal(stopped.status, 200);
  assert.equal(
    stopped.body.agent_acknowledged,
    true,
    'the stop command went B -> workflow -> queue -> agent on A and back',
  );
});
