// Application quota end to end: the owner's quota runs out in the middle of a workflow, our proxy
// refuses the agent's call, the workflow pauses fail-closed (paused, quota) and the 60 s quota resume
// schedule resumes it once the quota is raised; the interrupted step runs again and the workflow
// completes. The schedule is triggered instead of waited for (same schedule, same workflow).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { autonomousQuotaResumeScheduleId } from '../../../services/autonomous/quota-resume-schedule.ts';
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
