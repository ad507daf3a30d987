// Long histories continue as new: on a Temporal server that suggests continue-as-new after a few
// dozen events, an autonomous workflow moves to fresh runs between phases, carries its step
// bookkeeping over, and still completes with every milestone exactly once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type DevServer, readDevServerConfig, startDevServer } from '../../../bin/temporal-dev.ts';
import { temporalWorkflowId } from '../../../workflows/autonomous/contract.ts';
import { HAPPY_KINDS, startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let dev: DevServer;
let world: WorkflowWorld;

before(async () => {
  const base = readDevServerConfig();
  dev = await startDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH!,
    ephemeralPorts: true,
    inMemory: true,
    config: { dynamic_config: { ...base.dynamic_config, 'limit.historyCount.suggestContinueAsNew': 40 } },
  });
  world = await startWorkflowWorld({ env: { TEMPORAL_ADDRESS: dev.address } });
});
after(async () => {
  await world?.close();
  await dev?.stop();
});

test('a workflow continues as new between phases and completes with no duplicated milestone', async () => {
  const [wf] = await world.create(world.project(stepScript()));
  await world.start(wf!.workflowId);
  const row = await world.waitFor(
    wf!.workflowId,
    (r) => ['completed', 'failed', 'paused'].includes(r.status),
    'an end',
  );
  assert.equal(row.status, 'completed', `${row.error}`);
  const client = await world.app.deps.temporal.client();
  const runs: string[] = [];
  for await (const w of client.workflow.list({
    query: `WorkflowId = '${temporalWorkflowId(wf!.workflowId)}'`,
  }))
    runs.push(w.runId);
  assert.ok(runs.length > 1, `continued as new (${runs.length} runs)`);
  const kinds = (await world.milestones(wf!.workflowId)).map((m) => m.kind);
  assert.deepEqual(kinds, HAPPY_KINDS);
});
