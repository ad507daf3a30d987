// The persisted command queue and output buffer over the real agent endpoint: atomic claims (many
// concurrent polls, each command delivered once), the long poll held and woken in milliseconds,
// a poll that goes away not swallowing commands, pending -> delivered -> responded, synchronous waits,
// expiry on the test clock; outputs with gap-free indexes under concurrent writers, de-duplicated
// re-sends, replay from any index, and events for someone else's session refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { remoteCommands } from '../../services/remote-commands.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  boundSession,
  buildRemoteCast,
  type RemoteCast,
  registerFakeMachine,
  sleep,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let cast: RemoteCast;

before(async () => {
  app = await startTestApp();
  cast = await buildRemoteCast(app);
});
after(async () => {
  await app?.close();
});

const commandsOf = () =>
  remoteCommands({ database: app.database, settings: app.settings, now: app.clock.now });

test('concurrent polls: every command is delivered exactly once', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const q = commandsOf();
  const queued = new Set<string>();
  for (let i = 0; i < 300; i++)
    queued.add(
      (await q.queue({ machineId: machine.machineId, commandType: 'ping', payload: { i } })).commandId,
    );
  const polls = await Promise.all(
    Array.from({ length: 40 }, (_, i) => agentMessage(app.url, machine, { wait_ms: i % 2 ? 200 : 0 })),
  );
  const delivered = polls.flatMap((p) => {
    assert.equal(p.status, 200);
    return p.body.commands.map((c: any) => c.command_id as string);
  });
  // Some polls may have found the queue empty; drain whatever is left.
  for (;;) {
    const more = await agentMessage(app.url, machine);
    if (!more.body.commands.length) break;
    delivered.push(...more.body.commands.map((c: any) => c.command_id));
  }
  assert.equal(delivered.length, 300, 'no command delivered twice');
  assert.deepEqual(new Set(delivered), queued, 'every command delivered');
  const { db, t } = app.database;
  const rows = await db
    .select()
    .from(t.remoteRuntimeCommands)
    .where(eq(t.remoteRuntimeCommands.machineId, machine.machineId));
  assert.ok(rows.every((r) => r.status === 'delivered' && r.deliveredAt));
});

test('commands reach the agent oldest first with their payloads', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const q = commandsOf();
  for (let i = 0; i < 5; i++)
    await q.queue({ machineId: machine.machineId, commandType: 'ping', payload: { i } });
  const r = await agentMessage(app.url, machine);
  assert.deepEqual(
    r.body.commands.map((c: any) => c.payload.i),
    [0, 1, 2, 3, 4],
  );
  for (const c of r.body.commands)
    for (const f of ['command_id', 'command_type', 'session_id', 'payload', 'created_at'])
      assert.ok(f in c, f);
  assert.ok(r.body.server_time);
});

test('long poll: held until a command is queued, then answered in milliseconds', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await assign(app.url, cast.admin.session, machine.machineId, cast.userA.id, 'user');
  const sessionId = await boundSession(app, cast, machine);
  const started = Date.now();
  const poll = agentMessage(app.url, machine, { wait_ms: 20_000 });
  await sleep(300);
  const chatAt = Date.now();
  const chat = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'wake up' },
  });
  assert.equal(chat.status, 200);
  const r = await poll;
  const answeredAt = Date.now();
  assert.ok(answeredAt - started >= 300, 'the poll was held');
  assert.ok(
    answeredAt - chatAt < 1000,
    `woken ${answeredAt - chatAt} ms after the chat (not at the next poll tick)`,
  );
  assert.equal(r.body.commands.length, 1);
  assert.equal(r.body.commands[0].command_type, 'session.input');
  assert.equal(r.body.commands[0].payload.content, 'wake up');
  assert.equal(r.body.commands[0].command_id, chat.body.command_id);
});

test('long poll without commands returns after wait_ms; wait_ms above 25 s is refused', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const t0 = Date.now();
  const r = await agentMessage(app.url, machine, { wait_ms: 400 });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.commands, []);
  assert.ok(Date.now() - t0 >= 380);
  assert.equal((await agentMessage(app.url, machine, { wait_ms: 25_001 })).status, 400);
});

test('a poll that goes away does not swallow commands', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const controller = new AbortController();
  const poll = agentMessage(app.url, machine, { wait_ms: 20_000 }, controller.signal).catch(() => 'aborted');
  await sleep(200);
  controller.abort();
  assert.equal(await poll, 'aborted');
  await sleep(100);
  const { commandId } = await commandsOf().queue({ machineId: machine.machineId, commandType: 'ping' });
  const next = await agentMessage(app.url, machine);
  assert.deepEqual(
    next.body.commands.map((c: any) => c.command_id),
    [commandId],
  );
});

test('pending -> delivered -> responded; the synchronous caller gets the answer by command id', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const other = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const q = commandsOf();
  const { commandId } = await q.queue({ machineId: machine.machineId, commandType: 'ping' });
  assert.equal((await q.find(commandId))!.status, 'pending');
  const waiting = q.waitForResponse(commandId, 10_000);
  const polled = await agentMessage(app.url, machine);
  assert.equal(polled.body.commands[0].command_id, commandId);
  assert.equal((await q.find(commandId))!.status, 'delivered');
  // Another machine cannot answer for it.
  await agentMessage(app.url, other, {
    events: [{ type: 'response', command_id: commandId, payload: { pong: 'forged' } }],
  });
  assert.equal((await q.find(commandId))!.status, 'delivered');
  const t0 = Date.now();
  await agentMessage(app.url, machine, {
    events: [{ type: 'response', command_id: commandId, payload: { ok: true, pong: true } }],
  });
  const answer = await waiting;
  assert.ok(Date.now() - t0 < 1000, 'the waiting caller is woken at once');
  assert.deepEqual(answer?.payload, { ok: true, pong: true });
  const row = (await q.find(commandId))!;
  assert.equal(row.status, 'responded');
  assert.ok(row.respondedAt && row.deliveredAt);
  assert.equal(
    await q.waitForResponse(
      (await q.queue({ machineId: machine.machineId, commandType: 'ping' })).commandId,
      200,
    ),
    undefined,
    'no answer -> undefined after the timeout',
  );
});

test('an expired command is not delivered', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const q = commandsOf();
  const { commandId } = await q.queue({ machineId: machine.machineId, commandType: 'ping', ttlMs: 60_000 });
  const fresh = await q.queue({ machineId: machine.machineId, commandType: 'ping', ttlMs: 3_600_000 });
  app.clock.advance(61_000);
  try {
    const r = await agentMessage(app.url, machine);
    assert.deepEqual(
      r.body.commands.map((c: any) => c.command_id),
      [fresh.commandId],
    );
    assert.equal((await q.find(commandId))!.deliveredAt, null);
  } finally {
    app.clock.advance(-61_000);
  }
});

test('outputs: gap-free per-session event_index under concurrent writers; re-sends stored once', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const sessionId = await boundSession(app, cast, machine);
  const batch = (run: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      type: 'output',
      session_id: sessionId,
      run_id: run,
      seq: i + 1,
      stream: 'stdout',
      data: `${run} line ${i + 1}`,
      timestamp: new Date().toISOString(),
    }));
  const batches = Array.from({ length: 20 }, (_, i) => batch(`run${i}`, 10));
  const results = await Promise.all(batches.map((events) => agentMessage(app.url, machine, { events })));
  assert.ok(results.every((r) => r.status === 200));
  // The agent re-sends a batch whose acknowledgement it lost.
  await agentMessage(app.url, machine, { events: batches[3] });
  await agentMessage(app.url, machine, { events: [...batches[5]!, ...batches[5]!] });
  const r = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}/output?from=0&limit=1000`, {
    auth: cast.userA.session,
  });
  assert.equal(r.status, 200);
  const events = r.body.events as any[];
  assert.equal(events.length, 200, 'each line stored once');
  assert.deepEqual(
    events.map((e) => e.event_index),
    Array.from({ length: 200 }, (_, i) => i),
    'indexes 0..199 without gaps',
  );
  for (let i = 0; i < 20; i++) {
    const mine = events
      .filter((e) => e.data.startsWith(`run${i} `))
      .map((e) => Number(e.data.split(' ').pop()));
    assert.deepEqual(
      mine,
      Array.from({ length: 10 }, (_, k) => k + 1),
      `run${i} kept its order`,
    );
  }
});

test("replay from any index (JSON and GET session), and events for another machine's session are refused", async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const intruder = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const sessionId = await boundSession(app, cast, machine);
  const events = Array.from({ length: 30 }, (_, i) => ({
    type: 'output',
    session_id: sessionId,
    run_id: 'r',
    seq: i + 1,
    stream: i % 3 ? 'stdout' : 'stderr',
    data: `line ${i}`,
    timestamp: new Date().toISOString(),
  }));
  await agentMessage(app.url, machine, { events });
  const from = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}/output?from=25`, {
    auth: cast.userA.session,
  });
  assert.deepEqual(
    from.body.events.map((e: any) => e.data),
    ['line 25', 'line 26', 'line 27', 'line 28', 'line 29'],
  );
  assert.equal(from.body.next_index, 30);
  const detail = await api(
    app.url,
    'GET',
    `/api/remote/sessions/${sessionId}?output_from=10&output_limit=5`,
    { auth: cast.userA.session },
  );
  assert.deepEqual(
    detail.body.session.output.map((e: any) => e.event_index),
    [10, 11, 12, 13, 14],
  );
  assert.equal(detail.body.session.output[0].stream, 'stdout');
  assert.equal(detail.body.session.output_next_index, 15);

  const forged = await agentMessage(app.url, intruder, {
    events: [
      { type: 'output', session_id: sessionId, run_id: 'x', seq: 1, stream: 'stdout', data: 'forged' },
    ],
  });
  assert.equal(forged.status, 200, 'the agent is not made to re-send for ever');
  assert.equal(forged.body.rejected_events, 1);
  const malformed = await agentMessage(app.url, machine, {
    events: [{ type: 'output', session_id: sessionId }, { type: 'nonsense' }],
  });
  assert.equal(malformed.status, 200);
  assert.equal(malformed.body.rejected_events, 2);
  const all = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}/output`, {
    auth: cast.userA.session,
  });
  assert.equal(all.body.events.length, 30);
});
