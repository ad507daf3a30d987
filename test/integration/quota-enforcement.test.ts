// Quota enforcement (issue 10 item 7, spec rule 6) on the real Temporal dev server, worker and API:
// with multi-tenant mode on and a 2 s interval, the worker's schedule stops the remote session of a
// user over quota through its session workflow (token revoked, row stopped, one audit record naming
// `quota_exceeded`), raises one critical alert, and leaves a user within quota alone; later ticks add
// no alert and stop nothing. The schedule itself: created at worker start (overlap SKIP), corrected by
// a later start, kept paused when paused in the UI, removed when the switch is off.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import type { QuotaEnforcementSummary } from '../../domain/quota-enforcement-summary.ts';
import {
  ensureQuotaEnforcementSchedule,
  quotaEnforcementScheduleId,
} from '../../services/quota-enforcement.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { setUserQuota, today, uploadRequests } from '../support/quota.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type RemoteCast,
  registerFakeMachine,
  scriptedAgent,
  waitUntil,
} from '../support/remote.ts';
import { api, type Session } from '../support/session.ts';
import {
  proxyChat,
  proxyTokenOf,
  sessionState,
  storeMockKey,
  teardownAudits,
} from '../support/session-teardown.ts';

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
let agent: ReturnType<typeof scriptedAgent> | undefined;
/** userB's session, within quota after the first enforcement test. */
let within: string;

before(async () => {
  app = await startTestApp({
    worker: true,
    env: { SVC_QUOTA__MULTI_TENANT: 'true', SVC_QUOTA__ENFORCEMENT_INTERVAL_SECONDS: '2' },
  });
  mock = await startMockProvider();
  cast = await buildRemoteCast(app);
  await storeMockKey(app, cast.admin.session, cast.tenantId, mock);
});
after(async () => {
  await agent?.stop();
  await mock?.close();
  await app?.close();
});

const schedule = async () =>
  (await app.deps.temporal.client()).schedule.getHandle(
    quotaEnforcementScheduleId(app.settings.TEMPORAL_TASK_QUEUE),
  );

async function sessionOn(who: Session, machineId: string): Promise<string> {
  const r = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: who,
    body: { machine_id: machineId, project_path: '/tmp' },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.session_id;
}

const alertsOf = (userId: number) =>
  app.database.sql.query<{ dedupe_key: string }>('SELECT dedupe_key FROM quota_alerts WHERE user_id = ?', [
    userId,
  ]);

test('the worker creates the schedule: every 2 s (the setting), overlap SKIP', async () => {
  const d = await (await schedule()).describe();
  assert.equal(d.spec.intervals?.[0]?.every, 2000);
  assert.equal(d.policies.overlap, ScheduleOverlapPolicy.SKIP);
  assert.equal(d.action.type, 'startWorkflow');
  assert.equal(d.action.type === 'startWorkflow' && d.action.workflowType, 'quotaEnforcementWorkflow');
});

test('a user over quota has the remote session stopped and one alert; later ticks change nothing', async () => {
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, m);
  agent = scriptedAgent(app.url, m);
  for (const u of [cast.userA, cast.userB])
    assert.equal((await assign(app.url, cast.admin.session, m.machineId, u.id, 'user')).status, 200);
  const over = await sessionOn(cast.userA.session, m.machineId);
  within = await sessionOn(cast.userB.session, m.machineId);
  const token = await proxyTokenOf(app, over);
  assert.equal((await proxyChat(app, token)).status, 200, 'the session works before');

  await setUserQuota(app, cast.admin.session, cast.userA.id, { daily_request_quota: 3 });
  await setUserQuota(app, cast.admin.session, cast.userB.id, { daily_request_quota: 100 });
  await uploadRequests(app, cast.userA.session.user.username, 3);
  await uploadRequests(app, cast.userB.session.user.username, 3);

  await waitUntil(
    'the over-quota session to be stopped (its audit record is the last step)',
    async () => (await teardownAudits(app, over)).length > 0,
    30_000,
    200,
  );
  const s = await sessionState(app, over);
  assert.ok(s.allRevoked, 'every token of the stopped session is revoked');
  assert.equal((await proxyChat(app, token)).status, 401, 'the proxy refuses the token at once');
  const audits = await teardownAudits(app, over);
  assert.equal(audits.length, 1);
  assert.deepEqual(
    [audits[0]!.details.reason, audits[0]!.details.via, audits[0]!.username],
    ['quota_exceeded', 'workflow', 'system:quota-enforcement'],
    'stopped through the session workflow, audited as the schedule',
  );
  const key = `user:${cast.userA.id}:daily_requests:100:${today()}`;
  await waitUntil('the alert', async () => (await alertsOf(cast.userA.id)).length > 0, 10_000, 100);
  assert.deepEqual(
    (await alertsOf(cast.userA.id)).map((r) => r.dedupe_key),
    [key],
  );
  const [alert] = await app.database.sql.query<Record<string, unknown>>(
    `SELECT alert_type, severity, tenant_id FROM alerts WHERE alert_id = ?`,
    [`quota:${key}`],
  );
  assert.deepEqual(
    [alert?.alert_type, alert?.severity, Number(alert?.tenant_id)],
    ['quota', 'critical', cast.tenantId],
  );

  // Two more ticks: no second alert, nothing stopped, the user within quota untouched.
  const handle = await schedule();
  const taken = (await handle.describe()).info.numActionsTaken;
  await waitUntil(
    'two more ticks',
    async () => (await handle.describe()).info.numActionsTaken >= taken + 2,
    30_000,
    200,
  );
  const recent = (await handle.describe()).info.recentActions;
  const last = recent.at(-2)!.action;
  const client = await app.deps.temporal.client();
  const summary = (await client.workflow
    .getHandle(last.workflow.workflowId, last.workflow.firstExecutionRunId)
    .result()) as QuotaEnforcementSummary;
  assert.equal(summary.alertsRaised, 0, 'a later tick raises nothing new');
  assert.deepEqual(summary.sessionsStopped, []);
  assert.ok(summary.usersOverQuota.includes(cast.userA.id), 'the user is still over quota');
  assert.ok(!summary.usersOverQuota.includes(cast.userB.id));
  assert.equal((await alertsOf(cast.userA.id)).length, 1);
  assert.equal((await teardownAudits(app, over)).length, 1);
  assert.equal((await sessionState(app, within)).status, 'active', 'a user within quota keeps the session');
  assert.deepEqual(await alertsOf(cast.userB.id), []);
});

test("a tenant over quota has its users' sessions stopped and one tenant alert", async () => {
  const r = await api(app.url, 'PUT', `/api/tenants/${cast.tenantId}/quota`, {
    auth: cast.admin.session,
    body: { daily_request_limit: 1 },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // The audit record is the teardown's last step: once it is there, the stop is complete.
  const audits = await waitUntil(
    "the tenant's session to be stopped",
    async () => {
      const a = await teardownAudits(app, within);
      return a.length > 0 ? a : undefined;
    },
    30_000,
    200,
  );
  assert.deepEqual(
    audits.map((a) => a.details.reason),
    ['quota_exceeded'],
  );
  assert.equal((await sessionState(app, within)).status, 'stopped');
  const key = `tenant:${cast.tenantId}:daily_requests:100:${today()}`;
  await waitUntil(
    'the tenant alert',
    async () =>
      (await app.database.sql.query('SELECT 1 FROM alerts WHERE alert_id = ?', [`quota:${key}`])).length > 0,
    10_000,
    100,
  );
  const rows = await app.database.sql.query<Record<string, unknown>>(
    'SELECT user_id, tenant_id, threshold FROM quota_alerts WHERE tenant_id = ? AND user_id IS NULL',
    [cast.tenantId],
  );
  assert.deepEqual(
    rows.map((x) => [x.user_id, Number(x.tenant_id), Number(x.threshold)]),
    [[null, cast.tenantId, 100]],
    'one alert for the tenant, at its highest threshold',
  );
});

test('a later worker start corrects the interval and keeps a pause; the switch off removes it', async () => {
  const opts = {
    address: app.settings.TEMPORAL_ADDRESS!,
    namespace: app.settings.TEMPORAL_NAMESPACE,
    taskQueue: `${app.settings.TEMPORAL_TASK_QUEUE}-other`,
    multiTenant: true,
    intervalSeconds: 60,
  };
  const client = await app.deps.temporal.client();
  const handle = client.schedule.getHandle(quotaEnforcementScheduleId(opts.taskQueue));
  assert.equal(await ensureQuotaEnforcementSchedule(opts), 'ensured');
  assert.equal((await handle.describe()).spec.intervals?.[0]?.every, 60_000, 'the spec default interval');
  await handle.pause('paused in the UI');
  assert.equal(await ensureQuotaEnforcementSchedule({ ...opts, intervalSeconds: 30 }), 'ensured');
  const d = await handle.describe();
  assert.equal(d.spec.intervals?.[0]?.every, 30_000);
  assert.equal(d.state.paused, true, 'a restart does not unpause it');
  assert.equal(await ensureQuotaEnforcementSchedule({ ...opts, multiTenant: false }), 'removed');
  await assert.rejects(handle.describe());
  assert.equal(await ensureQuotaEnforcementSchedule({ ...opts, multiTenant: false }), 'absent');
});
