// A known gap the chaos tests can hit by chance, shown here deterministically (marked todo until fixed):
// the agent's poll claims commands (status `delivered`, committed) and only then writes its answer. An
// API killed between the two (scenario (a), api-kill.test.ts) leaves the commands `delivered` that no
// agent ever received, and nothing delivers them again: an acknowledged chat is lost. The poll's own
// "connection closed" release (PROTOCOL.md) cannot run in a process that died. A fix needs a delivery
// lease (re-claim `delivered` commands without a response after a while; the agent already ignores a
// command_id it has handled) that keeps a session's commands in order.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runtimeCommandsRepository } from '../../../db/repositories/runtime-commands.ts';
import { remoteCommands } from '../../../services/remote-commands.ts';
import { createTenant } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { agentMessage, type FakeMachine, registerFakeMachine } from '../../support/remote.ts';
import { login } from '../../support/session.ts';

let app: TestApp;
let machine: FakeMachine;

before(async () => {
  app = await startTestApp();
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  machine = await registerFakeMachine(app.url, admin, await createTenant(app, admin));
});
after(async () => {
  await app?.close();
});

test('a command claimed by an API that died before answering reaches the agent later', {
  todo: 'no delivery lease yet: the claimed command stays `delivered` for good',
}, async () => {
  const commands = remoteCommands({ database: app.database, settings: app.settings, now: app.deps.now });
  const { commandId } = await commands.queue({ machineId: machine.machineId, commandType: 'ping' });
  // What the dying API did: the claim committed, the answer never left the process.
  const claimed = await runtimeCommandsRepository(app.database).claimPending(
    machine.machineId,
    app.deps.now(),
    50,
  );
  assert.deepEqual(
    claimed.map((c) => c.commandId),
    [commandId],
  );
  // The agent keeps polling, well within the command's time to live.
  app.clock.advance(5 * 60_000);
  const seen: string[] = [];
  for (let i = 0; i < 3 && !seen.length; i++) {
    const r = await agentMessage(app.url, machine, { wait_ms: 0 });
    assert.equal(r.status, 200);
    seen.push(...r.body.commands.map((c: { command_id: string }) => c.command_id));
  }
  assert.deepEqual(seen, [commandId], 'the claimed command is delivered again');
});
