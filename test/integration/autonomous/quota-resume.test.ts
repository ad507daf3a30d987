// Quota auto-resume of autonomous workflows (spec document 2: application quota exceeded or quota
// check failure -> paused, "auto-resumed by the scheduler when quota is restored"; a manual pause is
// never auto-resumed) on the real Temporal dev server, the real worker (harness) and the real quota
// accounting. autonomousQuotaRestored lists a `paused (quota)` workflow of an owner under quota, and
// not one whose user or tenant quota is still exhausted, not a manual pause, not a running workflow,
// and nothing when the quota check fails; the resume workflow, the quota enforcement tick and the
// worker's schedule each deliver quotaRestoredSignal to `autonomous-<id>` (a test stand-in workflow,
// quota-signal-workflow.ts, on its own worker) and skip a workflow that does not exist.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createAutonomousSchedulingActivities } from '../../../activities/autonomous/scheduling.ts';
import type { Trigger } from '../../../domain/autonomous/transitions.ts';
import {
  autonomousQuotaResumeScheduleId,
  ensureAutonomousQuotaResumeSchedule,
} from '../../../services/autonomous/quota-resume-schedule.ts';
import { quotaServiceFor } from '../../../services/quota.ts';
import type { QuotaResumeSummary } from '../../../workflows/autonomous/quota-resume.ts';
import { createTenant, createUser } from '../../support/actors.ts';
import { workflowRowIn } from '../../support/autonomous-rows.ts';
import { ADMIN, startTestApp, type TestApp, temporalAddress } from '../../support/harness.ts';
import { setUserQuota } from '../../support/quota.ts';
import { api, login, type Session } from '../../support/session.ts';
import { signalsSeenQuery } from './quota-signal-workflow.ts';

let app: TestApp;
let admin: Session;
let client: Client;
let probeWorker: Worker;
let probeRunning: Promise<void>;
const probeQueue = `quota-probe-${randomBytes(4).toString('hex')}`;
const probes: WorkflowHandle[] = [];

/** autonomous_workflows.workflow_id of each case. */
const wf = {
  underQuota: '',
  noTemporalWorkflow: '',
  /** A row without tenant: its owner's check reads no tenant table. */
  noTenant: '',
  userOverQuota: '',
  tenantOverQuota: '',
  manualPause: '',
  running: '',
};
let overUser: { id: number; tenantId: number };

const activities = () =>
  createAutonomousSchedulingActivities({
    database: app.database,
    settings: app.settings,
    now: () => new Date(),
  });

const workflowOf = (userId: number, tenantId: number | null, triggers: Trigger[]) =>
  workflowRowIn(app.database, userId, tenantId, triggers);

/** One request of usage on the same accounting the proxy uses. */
async function spendOneRequest(userId: number, tenantId: number): Promise<void> {
  await quotaServiceFor({ database: app.database, now: () => new Date() }).recordUsage({
    subject: { userId, tenantId },
    usage: { inputTokens: 5, outputTokens: 5, cacheReadTokens: 0, totalTokens: 10 },
    requests: 1,
  });
}

async function probe(workflowId: string, expect: number): Promise<WorkflowHandle> {
  const h = await client.workflow.start('quotaSignalProbeWorkflow', {
    taskQueue: probeQueue,
    workflowId: `autonomous-${workflowId}`,
    args: [{ expect }],
  });
  probes.push(h);
  return h;
}

const seen = (h: WorkflowHandle) => h.query(signalsSeenQuery);

async function waitFor(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const scheduleHandle = () =>
  client.schedule.getHandle(autonomousQuotaResumeScheduleId(app.settings.TEMPORAL_TASK_QUEUE));

let probeA: WorkflowHandle;
let probeUserOver: WorkflowHandle;
let probeManual: WorkflowHandle;

before(async () => {
  app = await startTestApp({ worker: true });
  client = await app.deps.temporal.client();
  // The worker ensured the 60 s schedule (multi-tenant mode is off); hold it until the schedule test,
  // so the signal counts below are the tests' own.
  await scheduleHandle().pause('held by the test');
  admin = await login(app.url, ADMIN.username, ADMIN.password);

  const tenant = await createTenant(app, admin);
  const fullTenant = await createTenant(app, admin);
  const r = await api(app.url, 'PUT', `/api/tenants/${fullTenant}/quota`, {
    auth: admin,
    body: { daily_request_limit: 1 },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const under = await createUser(app, admin, { role: 'user', tenant_id: tenant });
  const over = await createUser(app, admin, { role: 'user', tenant_id: tenant });
  const inFull = await createUser(app, admin, { role: 'user', tenant_id: fullTenant });
  overUser = { id: over.id, tenantId: tenant };
  await setUserQuota(app, admin, over.id, { daily_request_quota: 1 });
  await spendOneRequest(over.id, tenant);
  await spendOneRequest(inFull.id, fullTenant);

  const quotaPause: Trigger[] = [{ type: 'start' }, { type: 'app_quota_exceeded' }];
  wf.underQuota = await workflowOf(under.id, tenant, quotaPause);
  wf.noTemporalWorkflow = await workflowOf(under.id, tenant, quotaPause);
  wf.noTenant = await workflowOf(under.id, null, quotaPause);
  wf.userOverQuota = await workflowOf(over.id, tenant, quotaPause);
  wf.tenantOverQuota = await workflowOf(inFull.id, fullTenant, quotaPause);
  wf.manualPause = await workflowOf(under.id, tenant, [{ type: 'start' }, { type: 'pause' }]);
  wf.running = await workflowOf(under.id, tenant, [{ type: 'start' }]);

  probeWorker = await Worker.create({
    connection: await NativeConnection.connect({ address: temporalAddress() }),
    namespace: app.settings.TEMPORAL_NAMESPACE,
    taskQueue: probeQueue,
    workflowsPath: path.resolve('test/integration/autonomous/quota-signal-workflow.ts'),
  });
  probeRunning = probeWorker.run();
  probeA = await probe(wf.underQuota, 3);
  probeUserOver = await probe(wf.userOverQuota, 1);
  probeManual = await probe(wf.manualPause, 1);
});
after(async () => {
  for (const h of probes) await h.terminate('test over').catch(() => {});
  probeWorker?.shutdown();
  await probeRunning;
  await app?.close();
});

test('lists paused (quota) workflows of owners under quota only', async () => {
  const listed = await activities().autonomousQuotaRestored();
  assert.deepEqual([...listed].sort(), [wf.underQuota, wf.noTemporalWorkflow, wf.noTenant].sort());
  assert.ok(!listed.includes(wf.userOverQuota), 'the user quota is still exhausted');
  assert.ok(!listed.includes(wf.tenantOverQuota), 'the tenant quota is still exhausted');
  assert.ok(!listed.includes(wf.manualPause), 'a manual pause is never auto-resumed');
  assert.ok(!listed.includes(wf.running));
});

test('the resume workflow signals each listed workflow and skips one that does not exist', async () => {
  const summary: QuotaResumeSummary = await client.workflow.execute('autonomousQuotaResumeWorkflow', {
    taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
    workflowId: `quota-resume-${randomUUID()}`,
  });
  assert.deepEqual([...summary.listed].sort(), [wf.underQuota, wf.noTemporalWorkflow, wf.noTenant].sort());
  assert.deepEqual(summary.signalled, [wf.underQuota]);
  await waitFor('the signal', async () => (await seen(probeA)) === 1);
  assert.equal(await seen(probeUserOver), 0);
  assert.equal(await seen(probeManual), 0);
});

test('the quota enforcement tick signals them too', async () => {
  const summary: { autonomousQuotaRestored?: QuotaResumeSummary } = await client.workflow.execute(
    'quotaEnforcementWorkflow',
    { taskQueue: app.settings.TEMPORAL_TASK_QUEUE, workflowId: `quota-tick-${randomUUID()}` },
  );
  assert.deepEqual(summary.autonomousQuotaRestored?.signalled, [wf.underQuota]);
  await waitFor('the second signal', async () => (await seen(probeA)) === 2);
  assert.equal(await seen(probeUserOver), 0);
  assert.equal(await seen(probeManual), 0);
});

test('a failed quota check lists none (fail-closed)', async () => {
  // Every check reads quota_usage: all fail.
  await app.database.sql.exec('ALTER TABLE quota_usage RENAME TO quota_usage_away');
  try {
    assert.deepEqual(await activities().autonomousQuotaRestored(), []);
  } finally {
    await app.database.sql.exec('ALTER TABLE quota_usage_away RENAME TO quota_usage');
  }
  // Only the checks of subjects with a tenant read tenant_usage: the one without a tenant would pass,
  // yet one failed check lists nobody this tick.
  await app.database.sql.exec('ALTER TABLE tenant_usage RENAME TO tenant_usage_away');
  try {
    assert.deepEqual(await activities().autonomousQuotaRestored(), []);
  } finally {
    await app.database.sql.exec('ALTER TABLE tenant_usage_away RENAME TO tenant_usage');
  }
  const listed = await activities().autonomousQuotaRestored();
  assert.ok(listed.includes(wf.underQuota) && listed.includes(wf.noTenant));
});

test('the worker schedule (multi-tenant mode off) fires and signals; multi-tenant mode removes it', async () => {
  const handle = scheduleHandle();
  const d = await handle.describe();
  assert.equal(d.spec.intervals?.[0]?.every, 60_000, 'quota.enforcement_interval_seconds, default 60');
  assert.equal(d.action.type, 'startWorkflow');
  assert.equal((d.action as { workflowType: string }).workflowType, 'autonomousQuotaResumeWorkflow');
  const opts = {
    address: app.settings.TEMPORAL_ADDRESS!,
    namespace: app.settings.TEMPORAL_NAMESPACE,
    taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
    multiTenant: false,
    intervalSeconds: 1,
  };
  assert.equal(await ensureAutonomousQuotaResumeSchedule(opts), 'ensured');
  assert.equal((await handle.describe()).state.paused, true, 'a later start keeps a pause');
  await handle.unpause();
  await waitFor('a scheduled tick', async () => (await seen(probeA)) >= 3, 30_000);
  assert.equal(await probeA.result(), 3);
  assert.equal(await seen(probeManual), 0, 'never the manual pause');
  // A run the schedule started just before it goes can still be listing under load; the next test
  // raises a quota, and such a late run would then signal (and so end) that test's probe first.
  await handle.pause('test: no tick after this one');
  await waitFor(
    'the scheduled runs to end',
    async () => (await handle.describe()).info.runningActions.length === 0,
  );
  assert.equal(await ensureAutonomousQuotaResumeSchedule({ ...opts, multiTenant: true }), 'removed');
  await assert.rejects(handle.describe());
  assert.equal(await ensureAutonomousQuotaResumeSchedule({ ...opts, multiTenant: true }), 'absent');
});

test('once the user quota is raised, the next tick lists and signals the workflow', async () => {
  await setUserQuota(app, admin, overUser.id, { daily_request_quota: 1000 });
  const summary: QuotaResumeSummary = await client.workflow.execute('autonomousQuotaResumeWorkflow', {
    taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
    workflowId: `quota-resume-${randomUUID()}`,
  });
  assert.ok(summary.listed.includes(wf.userOverQuota));
  assert.ok(summary.signalled.includes(wf.userOverQuota));
  assert.equal(await probeUserOver.result(), 1);
  assert.ok(!summary.listed.includes(wf.tenantOverQuota));
  assert.ok(!summary.listed.includes(wf.manualPause));
  assert.equal(await seen(probeManual), 0);
});
