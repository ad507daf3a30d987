// The long polls' safety net (services/remote-command-sweep.ts): one sweep per process finds the
// machines with a held poll that may have something to claim, instead of every poll re-running its
// claim every 5 s. What it must still catch, on both databases: a command stored without a wake-up on
// this instance's bus (queued by another process on SQLite, a NOTIFY lost during a LISTEN reconnect),
// and a delivered command that was never answered, claimable again once its delivery lease ran out.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { runtimeCommandsRepository } from '../../db/repositories/runtime-commands.ts';
import { sealPayload } from '../../domain/remote-command-payload.ts';
import { REDELIVER_AFTER_MS, remoteCommands } from '../../services/remote-commands.ts';
import { storageKey } from '../../services/secrets.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  buildRemoteCast,
  type RemoteCast,
  registerFakeMachine,
  sleep,
} from '../support/remote.ts';

let app: TestApp;
let cast: RemoteCast;

before(async () => {
  app = await startTestApp();
  cast = await buildRemoteCast(app);
});
after(async () => {
  await app?.close();
});

test('a command stored without a wake-up reaches the held long poll of its machine, and only that one', async () => {
  const [target, other] = [
    await registerFakeMachine(app.url, cast.admin.session, cast.tenantId),
    await registerFakeMachine(app.url, cast.admin.session, cast.tenantId),
  ];
  // Both held well past the sweep interval. Without the sweep the target's poll would only find the
  // command at the end of its 20 s, after the other poll's 12 s.
  const poll = agentMessage(app.url, target, { wait_ms: 20_000 });
  let otherAnswered = false;
  const otherPoll = agentMessage(app.url, other, { wait_ms: 12_000 }).finally(() => {
    otherAnswered = true;
  });
  await sleep(300);
  const now = app.clock.now();
  const commandId = randomUUID();
  // Straight into the table: nothing is published on this instance's bus.
  await runtimeCommandsRepository(app.database).insert({
    commandId,
    machineId: target.machineId,
    sessionId: null,
    commandType: 'ping',
    payload: sealPayload({ n: 1 }, storageKey(app.settings)),
    status: 'pending',
    createdAt: now,
    expiresAt: new Date(now.getTime() + 60_000),
  });
  const r = await poll;
  assert.equal(otherAnswered, false, 'the sweep woke the poll before its wait ran out');
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.body.commands.map((c: any) => [c.command_id, c.payload.n]),
    [[commandId, 1]],
  );
  const o = await otherPoll;
  assert.equal(o.status, 200);
  assert.deepEqual(o.body.commands, [], "another machine's poll is not handed the command");
});

test('a delivered command nobody answered goes again to a held poll once its lease ran out', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const { commandId } = await remoteCommands({
    database: app.database,
    settings: app.settings,
    now: app.clock.now,
  }).queue({ machineId: machine.machineId, commandType: 'ping' });
  const first = await agentMessage(app.url, machine);
  assert.deepEqual(
    first.body.commands.map((c: any) => c.command_id),
    [commandId],
  );
  // The agent that got it dies without answering; its next poll (a restarted agent) is held.
  const poll = agentMessage(app.url, machine, { wait_ms: 20_000 });
  await sleep(300);
  app.clock.advance(REDELIVER_AFTER_MS + 1000);
  const again = await poll;
  assert.equal(again.status, 200);
  assert.deepEqual(
    again.body.commands.map((c: any) => c.command_id),
    [commandId],
  );
});
