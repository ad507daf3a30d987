// Application quota end to end: the owner's quota runs out in the middle of a workflow, our proxy
// refuses the agent's call, the workflow pauses fail-closed (paused, quota) and the 60 s quota resume
// schedule resumes it once the quota is raised; the interrupted step runs again and the workflow
// completes. The schedule is triggered instead of waited for (same schedule, same workflow). The quota
// enforcement tick's signal (services/quota-enforcement.ts) pauses a running workflow the same way.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { autonomousQuotaResumeScheduleId } from '../../../services/autonomous/quota-resume-schedule.ts';
import { quotaExceededSignal, stateQuery, stopUpdate } from '../../../workflows/autonomous/contract.ts';
import { ADMIN } from '../../support/harness.ts';
import { setUserQuota } from '../../support/quota.ts';
import { api, login } from '../../support/session.ts';
import { startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
before(async () => {
  world = await startWorkflowWorld();
});
after(async () => {
  await world?.close();
});

test('quota exhaustion pauses the workflow (quota) and the quota schedule auto-resumes it', async () => {
  const admin = await login(world.app.url, ADMIN.username, ADMIN.password);
  // plan, plan review and implementation make one call each: the test step's call is refused.
  await setUserQuota(world.app, admin, world.userId, { daily_request_quota: 3 });
  const [wf] = await world.create(world.project(stepScript()));
  await world.start(wf!.workflowId);
  const paused = await world.waitFor(
    wf!.workflowId,
    (r) => r.status === 'paused' || r.status === 'failed',
    'paused',
    60_000,
  );
  assert.equal(paused.status, 'paused', `${paused.error}`);
  assert.equal(paused.pausedBy, 'quota');
  assert.equal(paused.previousStatus, 'developing');
  const before = await world.milestones(wf!.workflowId);
  const refusedTest = before.find((m) => m.kind === 'test')!;
  assert.equal(refusedTest.status, 'failed');
  assert.equal(refusedTest.phaseTotalTokens, 0, 'the refused call spent nothing');

  const client = await world.app.deps.temporal.client();
  const schedule = client.schedule.getHandle(
    autonomousQuotaResumeScheduleId(world.app.settings.TEMPORAL_TASK_QUEUE),
  );
  // Still over quota: the tick leaves it paused.
  await schedule.trigger();
  await new Promise((r) => setTimeout(r, 2000));
  assert.equal((await world.row(wf!.workflowId)).status, 'paused');

  const r = await api(world.app.url, 'PUT', `/api/admin/users/${world.userId}/quota`, {
    auth: admin,
    body: { daily_request_quota: null },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await schedule.trigger();
  const done = await world.waitFor(wf!.workflowId, (w) => w.status === 'completed', 'completed', 90_000);
  assert.equal(done.pausedBy, null);
  const tests = (await world.milestones(wf!.workflowId)).filter((m) => m.kind === 'test');
  assert.deepEqual(
    tests.map((m) => m.status),
    ['failed', 'completed'],
    'the refused step ran again after the resume',
  );
  assert.equal(tests[1]!.attempt, 2);
});

test('the quota enforcement signal pauses a running workflow by quota; the quota schedule resumes it', async () => {
  // The implementation step runs long, so the signal lands while the agent works.
  const base = stepScript();
  const project = world.project({
    ...base,
    implementation: { steps: [{ call: 1 }, { sleep: 120_000 }, { text: 'implemented' }] },
  });
  const [wf] = await world.create(project);
  await world.start(wf!.workflowId);
  await world.waitFor(wf!.workflowId, (r) => r.status === 'developing', 'developing', 60_000);
  const h = await world.handle(wf!.workflowId);
  await h.signal(quotaExceededSignal);
  const paused = await world.waitFor(wf!.workflowId, (r) => r.status === 'paused', 'paused', 30_000);
  assert.deepEqual([paused.pausedBy, paused.previousStatus], ['quota', 'developing']);
  // A second signal to a paused workflow changes nothing (refused by its own state).
  await h.signal(quotaExceededSignal);
  assert.equal((await h.query(stateQuery)).pausedBy, 'quota');

  // The owner is within quota: the next quota tick resumes it, as after a refused call.
  const client = await world.app.deps.temporal.client();
  await client.schedule
    .getHandle(autonomousQuotaResumeScheduleId(world.app.settings.TEMPORAL_TASK_QUEUE))
    .trigger();
  const resumed = await world.waitFor(wf!.workflowId, (r) => r.status === 'developing', 'resumed', 60_000);
  assert.equal(resumed.pausedBy, null);
  await h.executeUpdate(stopUpdate, { args: [{ actor: { userId: world.userId, username: 'tester' } }] });
});
