// The session workflow keeps its history bounded: on a Temporal server that suggests continue-as-new
// after a few dozen events, a long-lived session moves to a fresh run, carries its state over (status,
// token times, command counter) and keeps working.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type DevServer, readDevServerConfig, startDevServer } from '../../bin/temporal-dev.ts';
import { remoteSessionWorkflowId, sessionStateQuery } from '../../workflows/remote/contract.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  buildRemoteCast,
  type RemoteCast,
  registerFakeMachine,
  scriptedAgent,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let dev: DevServer;
let app: TestApp;
let cast: RemoteCast;

before(async () => {
  const base = readDevServerConfig();
  dev = await startDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH!,
    ephemeralPorts: true,
    inMemory: true,
    config: { dynamic_config: { ...base.dynamic_config, 'limit.historyCount.suggestContinueAsNew': 60 } },
  });
  app = await startTestApp({ worker: true, env: { TEMPORAL_ADDRESS: dev.address } });
  cast = await buildRemoteCast(app);
});
after(async () => {
  await app?.close();
  await dev?.stop();
});

test('a long-lived session continues as new and keeps its state', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, machine);
  const agent = scriptedAgent(app.url, machine);
  try {
    const created = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: cast.admin.session,
      body: { machine_id: machine.machineId, project_path: '/tmp' },
    });
    assert.equal(created.status, 201);
    const sid = created.body.session_id;
    const handle = (await app.deps.temporal.client()).workflow.getHandle(remoteSessionWorkflowId(sid));
    const firstRun = (await handle.describe()).runId;
    const initial = await handle.query(sessionStateQuery);

    for (let i = 0; i < 12; i++) {
      assert.equal(
        (await api(app.url, 'POST', `/api/remote/sessions/${sid}/pause`, { auth: cast.admin.session }))
          .status,
        200,
      );
      assert.equal(
        (await api(app.url, 'POST', `/api/remote/sessions/${sid}/resume`, { auth: cast.admin.session }))
          .status,
        200,
      );
    }
    const later = await handle.describe();
    assert.notEqual(later.runId, firstRun, 'the workflow continued as new');
    assert.ok(later.historyLength < 200, `history stays bounded (${later.historyLength} events)`);
    const state = await handle.query(sessionStateQuery);
    assert.equal(state.status, 'active');
    assert.equal(state.seq, 24, 'the command counter carried over (ids stay unique)');
    assert.equal(state.tokenExpiresAt, initial.tokenExpiresAt, 'token times carried over');

    const stopped = await api(app.url, 'POST', `/api/remote/sessions/${sid}/stop`, {
      auth: cast.admin.session,
    });
    assert.equal(stopped.status, 200);
    assert.equal((await handle.result()).status, 'stopped');
  } finally {
    await agent.stop();
  }
});
