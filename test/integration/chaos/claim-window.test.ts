// The claim window, shown deterministically: the agent's poll claims commands (status `delivered`,
// committed) and only then writes its answer. An API killed between the two (scenario (a),
// api-kill.test.ts, can hit it by chance) leaves commands `delivered` that no agent received. The
// delivery lease (db/repositories/runtime-commands.ts) hands such a command out again once its
// delivery is older than REDELIVER_AFTER_MS, and keeps the session's order: a later command of the same
// session waits while an earlier one is in flight, and follows it in the same batch once its lease ran
// out. Concurrent polls still never receive a command twice within the lease.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runtimeCommandsRepository } from '../../../db/repositories/runtime-commands.ts';
import { REDELIVER_AFTER_MS, remoteCommands } from '../../../services/remote-commands.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import {
  agentMessage,
  boundSession,
  buildRemoteCast,
  type FakeMachine,
  type RemoteCast,
  registerFakeMachine,
} from '../../support/remote.ts';

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

/** What the dying API did: the claim committed, the answer never left the process. */
async function claimAndDie(machine: FakeMachine): Promise<string[]> {
  const now = app.clock.now();
  const rows = await runtimeCommandsRepository(app.database).claimPending(
    machine.machineId,
    now,
    50,
    new Date(now.getTime() - REDELIVER_AFTER_MS),
  );
  return rows.map((r) => r.commandId);
}

const poll = async (machine: FakeMachine): Promise<string[]> => {
  const r = await agentMessage(app.url, machine, { wait_ms: 0 });
  assert.equal(r.status, 200);
  return r.body.commands.map((c: { command_id: string }) => c.command_id);
};

async function withClockAdvanced<T>(ms: number, f: () => Promise<T>): Promise<T> {
  app.clock.advance(ms);
  try {
    return await f();
  } finally {
    app.clock.advance(-ms);
  }
}

test('a command claimed by an API that died before answering reaches the agent once the lease ran out', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const q = commandsOf();
  const { commandId } = await q.queue({ machineId: machine.machineId, commandType: 'ping' });
  assert.deepEqual(await claimAndDie(machine), [commandId]);

  assert.deepEqual(await poll(machine), [], 'within the lease: not handed out again');
  const again = await withClockAdvanced(REDELIVER_AFTER_MS + 1000, () => poll(machine));
  assert.deepEqual(again, [commandId], 'after the lease: delivered again');
  // Answered: never handed out again, however long.
  const answered = await agentMessage(app.url, machine, {
    wait_ms: 0,
    events: [{ type: 'response', command_id: commandId, payload: { ok: true, pong: true } }],
  });
  assert.equal(answered.status, 200);
  assert.equal((await q.find(commandId))!.status, 'responded');
  assert.deepEqual(await withClockAdvanced(5 * 60_000, () => poll(machine)), []);
});

test("a session's later command waits behind an earlier one in flight and follows it in order", async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const sessionA = await boundSession(app, cast, machine);
  const sessionB = await boundSession(app, cast, machine);
  const q = commandsOf();
  const chat = (sessionId: string, text: string) =>
    q.queue({ machineId: machine.machineId, sessionId, commandType: 'session.message', payload: { text } });
  const first = await chat(sessionA, 'one');
  assert.deepEqual(await claimAndDie(machine), [first.commandId]);
  const second = await chat(sessionA, 'two');
  const other = await chat(sessionB, 'other session');

  assert.deepEqual(
    await poll(machine),
    [other.commandId],
    "within the lease only the other session's command goes out: 'two' would overtake 'one'",
  );
  const batch = await withClockAdvanced(REDELIVER_AFTER_MS + 1000, () => poll(machine));
  assert.deepEqual(
    batch,
    [first.commandId, second.commandId, other.commandId],
    "the lost one again, then the next, in order (and the other session's, never answered, again)",
  );
});

test('an answered command releases the next one of its session at once', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const session = await boundSession(app, cast, machine);
  const q = commandsOf();
  const first = await q.queue({
    machineId: machine.machineId,
    sessionId: session,
    commandType: 'session.interrupt',
  });
  assert.deepEqual(await poll(machine), [first.commandId]);
  const second = await q.queue({
    machineId: machine.machineId,
    sessionId: session,
    commandType: 'session.interrupt',
  });
  assert.deepEqual(await poll(machine), [], 'waits for the first one to be answered');
  const r = await agentMessage(app.url, machine, {
    wait_ms: 0,
    events: [{ type: 'response', command_id: first.commandId, payload: { ok: true } }],
  });
  assert.deepEqual(
    r.body.commands.map((c: { command_id: string }) => c.command_id),
    [second.commandId],
    'the request that carried the answer receives the next command',
  );
});

test('concurrent polls past the lease still hand a lost command out once', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const q = commandsOf();
  const queued: string[] = [];
  for (let i = 0; i < 20; i++)
    queued.push(
      (await q.queue({ machineId: machine.machineId, commandType: 'ping', payload: { i } })).commandId,
    );
  assert.equal((await claimAndDie(machine)).length, 20);
  const delivered = await withClockAdvanced(REDELIVER_AFTER_MS + 1000, async () =>
    (await Promise.all(Array.from({ length: 12 }, () => poll(machine)))).flat(),
  );
  assert.deepEqual(delivered.sort(), [...queued].sort(), 'each lost command handed out exactly once');
});
