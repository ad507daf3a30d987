// Controls through the HTTP API reach the real autonomous workflow (a Temporal worker running
// workflows/autonomous/workflow.ts, the scripted fake CLI through the proxy): a workflow created with
// POST /api/autonomous/workflows (the API starts its run) is paused (the agent process frozen),
// resumed and stopped (process killed) with the row following each answer; and a control on a
// workflow whose run has ended starts the run again from the row and applies the update (retry of a
// failed workflow). The update validators' own refusals are in workflow-controls.test.ts.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { temporalWorkflowId } from '../../../workflows/autonomous/contract.ts';
import { PASSWORD } from '../../support/actors.ts';
import { api, login, type Session } from '../../support/session.ts';
import { processState, waitForFile, waitGone } from './runner-support.ts';
import { startWorkflowWorld, stepScript, UNCONFINED, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
let owner: Session;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-api-controls-'));

before(async () => {
  world = await startWorkflowWorld({ env: UNCONFINED }); // pid and prompt files in the test's temp dir
  const { db, t } = world.app.database;
  const [u] = await db.select().from(t.users).where(eq(t.users.id, world.userId));
  owner = await login(world.app.url, u!.username, PASSWORD);
});
after(async () => {
  await world?.close();
});

const post = (workflowId: string, control: string, body: unknown = {}) =>
  api(world.app.url, 'POST', `/api/autonomous/workflows/${workflowId}/${control}`, { auth: owner, body });

/** A project whose plan step writes its pid and sleeps, created and started through the API. */
async function createWithSlowPlan() {
  const pidFile = path.join(tmp, `plan-${Date.now()}.pid`);
  const project = world.project(
    stepScript({ plan: { pidFile, steps: [{ call: 1 }, { sleep: 60_000 }, { text: '1. fix it' }] } }),
  );
  const r = await api(world.app.url, 'POST', '/api/autonomous/workflows', {
    auth: owner,
    body: { requirement: 'Make app.txt say fixed', project_path: project, cli_tool: 'cli_beta' },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return { workflowId: r.body.id as string, pidFile };
}

test('pause, resume and stop through the API reach the running workflow and its agent', async () => {
  const { workflowId, pidFile } = await createWithSlowPlan();
  const pid = Number(await waitForFile(pidFile, 60_000));
  assert.equal((await world.row(workflowId)).status, 'planning');

  const extended = await post(workflowId, 'extend-planning-timeout', { seconds: 600 });
  assert.equal(extended.status, 200, JSON.stringify(extended.body));
  assert.equal(extended.body.status, 'planning');
  const deadline0 = (await world.row(workflowId)).planningDeadlineAt;
  assert.ok(deadline0 && deadline0.getTime() > Date.now() + 500_000, 'the planning deadline moved');

  // The row says failed while the run knows it is planning: the API's own check lets the retry
  // through and the workflow's validator refuses it (AUTONOMOUS_REFUSED) -> 409 with its reason.
  const { db, t } = world.app.database;
  const setStatus = (status: string) =>
    db.update(t.autonomousWorkflows).set({ status }).where(eq(t.autonomousWorkflows.workflowId, workflowId));
  await setStatus('failed');
  const raced = await post(workflowId, 'retry');
  await setStatus('planning');
  assert.equal(raced.status, 409, JSON.stringify(raced.body));
  assert.match(raced.body.error, /cannot retry a workflow that is planning/);

  const paused = await post(workflowId, 'pause');
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.id, workflowId);
  assert.equal(paused.body.status, 'paused');
  assert.equal(paused.body.paused_by, 'manual');
  assert.equal((await world.row(workflowId)).status, 'paused');
  const deadline = Date.now() + 10_000;
  while (processState(pid) !== 'T' && Date.now() < deadline) await sleep(50);
  assert.equal(processState(pid), 'T', 'the agent process is frozen');
  const again = await post(workflowId, 'pause');
  assert.equal(again.status, 409);
  assert.equal(again.body.error, 'the workflow is already paused');

  const resumed = await post(workflowId, 'resume');
  assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  assert.equal(resumed.body.status, 'planning');
  assert.equal((await world.row(workflowId)).status, 'planning');
  const thawed = Date.now() + 10_000;
  while (processState(pid) === 'T' && Date.now() < thawed) await sleep(50);
  assert.notEqual(processState(pid), 'T', 'the agent process continues');

  const stopped = await post(workflowId, 'stop');
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  assert.equal(stopped.body.status, 'cancelled');
  assert.ok(await waitGone(pid), 'the agent process is gone');
  assert.equal((await world.row(workflowId)).status, 'cancelled');
  const afterStop = await post(workflowId, 'resume');
  assert.equal(afterStop.status, 409);

  // The run's input carries the workflow id only; the provider key never reaches a log.
  const client = await world.app.deps.temporal.client();
  const history = await client.workflow.getHandle(temporalWorkflowId(workflowId)).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const input = (started?.input?.payloads ?? []).map((p) =>
    JSON.parse(Buffer.from(p.data!).toString('utf8')),
  );
  assert.deepEqual(input, [{ workflowId }]);
  assert.equal(world.app.logs.join('').includes('real-anthropic-key'), false);

  const audit = await world.app.database.sql.query<{ action: string; success: unknown }>(
    'SELECT action, success FROM audit_logs WHERE resource_id = ? ORDER BY id',
    [workflowId],
  );
  assert.deepEqual(
    audit.map((a) => [a.action, Boolean(a.success)]),
    [
      ['AUTONOMOUS_WORKFLOW_CREATE', true],
      ['AUTONOMOUS_WORKFLOW_EXTEND_PLANNING', true],
      ['AUTONOMOUS_WORKFLOW_RETRY', false],
      ['AUTONOMOUS_WORKFLOW_PAUSE', true],
      ['AUTONOMOUS_WORKFLOW_PAUSE', false],
      ['AUTONOMOUS_WORKFLOW_RESUME', true],
      ['AUTONOMOUS_WORKFLOW_STOP', true],
      ['AUTONOMOUS_WORKFLOW_RESUME', false],
    ],
  );
});

test('retry of a failed workflow whose run has ended: the API starts the run again and retries', async () => {
  const { workflowId, pidFile } = await createWithSlowPlan();
  const pid = Number(await waitForFile(pidFile, 60_000));
  const client = await world.app.deps.temporal.client();
  const handle = client.workflow.getHandle(temporalWorkflowId(workflowId));
  const firstRun = (await handle.describe()).runId;
  await handle.terminate('simulated end of the run');
  assert.ok(await waitGone(pid, 15_000), 'the runner activity is cancelled with the run');
  // The state a failed planning step leaves behind, with no run any more.
  const { db, t } = world.app.database;
  await db
    .update(t.autonomousWorkflows)
    .set({ status: 'failed', currentPhase: 'planning', error: 'planning failed' })
    .where(eq(t.autonomousWorkflows.workflowId, workflowId));

  const r = await post(workflowId, 'retry');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.status, 'planning');
  const d = await handle.describe();
  assert.notEqual(d.runId, firstRun, 'a new run');
  assert.equal(d.status.name, 'RUNNING');
  assert.equal((await world.row(workflowId)).status, 'planning');
  const pid2 = Number(
    await waitForFile(pidFile, 60_000).then(async (first) => {
      // The plan step runs again: the fake CLI writes its new pid over the old one.
      const deadline = Date.now() + 60_000;
      let now = first;
      while (Number(now) === pid && Date.now() < deadline) {
        await sleep(100);
        now = await waitForFile(pidFile);
      }
      return now;
    }),
  );
  assert.notEqual(pid2, pid);
  const stopped = await post(workflowId, 'stop');
  assert.equal(stopped.status, 200);
  assert.ok(await waitGone(pid2));
});

test('cancel a round at the plan milestone, feedback through the API, then done', async () => {
  const pidFile = path.join(tmp, `impl-${Date.now()}.pid`);
  const base = stepScript();
  const project = world.project({
    ...base,
    'implementation@1': { pidFile, steps: [{ call: 1 }, { sleep: 60_000 }, { text: 'late' }] },
  });
  const created = await api(world.app.url, 'POST', '/api/autonomous/workflows', {
    auth: owner,
    body: { requirement: 'Make app.txt say fixed', project_path: project, cli_tool: 'cli_beta' },
  });
  assert.equal(created.status, 201);
  const workflowId = created.body.id as string;
  const pid = Number(await waitForFile(pidFile, 60_000));
  const timeline = await api(world.app.url, 'GET', `/api/autonomous/workflows/${workflowId}/timeline`, {
    auth: owner,
  });
  const plan = timeline.body.milestones.find((m: { kind: string }) => m.kind === 'plan');
  assert.ok(plan, JSON.stringify(timeline.body));

  const cancelled = await post(workflowId, `milestones/${plan.id}/cancel`);
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.equal(cancelled.body.status, 'waiting');
  assert.ok(await waitGone(pid), 'the running step was terminated');
  const after = await api(world.app.url, 'GET', `/api/autonomous/workflows/${workflowId}/timeline`, {
    auth: owner,
  });
  const later = after.body.milestones.filter((m: { sequence: number }) => m.sequence > plan.sequence);
  assert.ok(later.length >= 1 && later.every((m: { is_cancelled: boolean }) => m.is_cancelled));

  const empty = await post(workflowId, 'resume-with-feedback', { feedback: ' ' });
  assert.equal(empty.status, 400);
  const back = await post(workflowId, 'resume-with-feedback', { feedback: 'Say fixed, not broken' });
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.equal(back.body.status, 'planning');
  const feedback = (await world.milestones(workflowId)).filter((m) => m.kind === 'feedback');
  assert.deepEqual(
    feedback.map((m) => m.content),
    ['Say fixed, not broken'],
  );

  const finished = await post(workflowId, 'done');
  assert.equal(finished.status, 200, JSON.stringify(finished.body));
  assert.equal(finished.body.status, 'completed');
  assert.equal((await world.row(workflowId)).status, 'completed');
  const gone = await api(world.app.url, 'DELETE', `/api/autonomous/workflows/${workflowId}`, { auth: owner });
  assert.equal(gone.status, 204);
});
