// The org-sync Temporal Schedule (spec document 2, "Organization sync and alert webhooks" item 3): with
// chatplat_a.org_sync_enabled the worker creates a schedule every org_sync_interval_minutes (here 1)
// carrying only {platform, tenantId}; triggering it (instead of waiting a minute) runs a full sync
// against the local fake; a disabled or unconfigured platform has no schedule, and disabling removes it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ScheduleNotFoundError } from '@temporalio/client';
import { DEFAULT_TENANT_ID } from '../../../domain/tenants.ts';
import { ensureOrgSyncSchedules, orgSyncScheduleId } from '../../../services/orgsync/schedule.ts';
import { startChatplatAFake } from '../../fixtures/chatplat-a-fake.ts';
import type { FakeControls } from '../../fixtures/chatplat-org.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { waitUntil } from '../../support/remote.ts';
import { api, login } from '../../support/session.ts';
import { baseOrg, orgState } from './org-state.ts';

const SECRET = 'schedule-secret-41c3';
let app: TestApp;
let fake: FakeControls;

before(async () => {
  fake = await startChatplatAFake({ org: baseOrg(), appKey: 'sched-key', appSecret: SECRET });
  app = await startTestApp({
    worker: true,
    env: {
      SVC_CHATPLAT_A__APP_KEY: 'sched-key',
      SVC_CHATPLAT_A__APP_SECRET: SECRET,
      SVC_CHATPLAT_A__API_BASE_URL: fake.url,
      SVC_CHATPLAT_A__ORG_SYNC_ENABLED: 'true',
      SVC_CHATPLAT_A__ORG_SYNC_INTERVAL_MINUTES: '1',
      SVC_CHATPLAT_A__ORG_SYNC_TENANT_ID: String(DEFAULT_TENANT_ID),
      // configured but not enabled: no schedule
      SVC_CHATPLAT_B__APP_KEY: 'b-key',
      SVC_CHATPLAT_B__APP_SECRET: 'b-secret',
    },
  });
});
after(async () => {
  await app?.close();
  await fake?.close();
});

test('the worker schedules the enabled platform; a triggered run syncs the org', async () => {
  const queue = app.settings.TEMPORAL_TASK_QUEUE;
  const client = await app.deps.temporal.client();
  const handle = client.schedule.getHandle(orgSyncScheduleId('chatplat_a', queue));
  const described = await handle.describe();
  assert.equal(described.spec.intervals?.[0]?.every, 60_000);
  assert.equal(described.action.type, 'startWorkflow');
  assert.equal(described.action.workflowType, 'orgSyncWorkflow');
  assert.deepEqual(described.action.args, [{ platform: 'chatplat_a', tenantId: DEFAULT_TENANT_ID }]);
  assert.ok(!JSON.stringify(described).includes(SECRET));
  await assert.rejects(
    client.schedule.getHandle(orgSyncScheduleId('chatplat_b', queue)).describe(),
    ScheduleNotFoundError,
  );

  // The schedule fires on its own at each full minute, so a run of its own may come before (or, unpaused,
  // beside) the triggered one: held from here (a trigger still runs), and the teams counted over all runs.
  await handle.pause('held by the test: only the triggered run from here');
  const earlier = (await handle.describe()).info.recentActions.map((a) => a.action.workflow.workflowId);
  await handle.trigger();
  // The schedule's own workflow starts the run: on the suite's shared dev server under CI's load that
  // took more than the 10 s this once waited.
  const workflowId = await waitUntil(
    'the triggered run',
    async () => {
      const ids = (await handle.describe()).info.recentActions.map((a) => a.action.workflow.workflowId);
      return ids.length > earlier.length ? ids.at(-1) : undefined;
    },
    60_000,
    100,
  );
  let created = 0;
  for (const id of [...earlier, workflowId])
    created += (await client.workflow.getHandle(id).result()).teams_created;
  assert.equal(created, 4, 'the org has 4 departments, each created as a team once');
  const run = (
    await app.database.sql.query<Record<string, unknown>>(
      'SELECT status, platform, tenant_id FROM org_sync_runs WHERE run_id = ?',
      [workflowId],
    )
  )[0];
  assert.deepEqual(
    [run?.status, run?.platform, Number(run?.tenant_id)],
    ['succeeded', 'chatplat_a', DEFAULT_TENANT_ID],
  );
  // the scheduled run's id (Temporal appends the start time) is readable through the API too
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const viaApi = await api(app.url, 'GET', `/api/admin/chatplat_a/sync/${workflowId}`, { auth: admin });
  assert.equal(viaApi.status, 200, workflowId);
  assert.equal(viaApi.body.status, 'succeeded');
  const state = await orgState(app, DEFAULT_TENANT_ID, 'chatplat_a');
  assert.equal(state.teams.length, 4);
  assert.equal(state.users.length, 6);
  assert.ok(!JSON.stringify(await client.workflow.getHandle(workflowId).fetchHistory()).includes(SECRET));
});

test('disabling the sync removes the schedule; ensuring again is idempotent', async () => {
  const queue = app.settings.TEMPORAL_TASK_QUEUE;
  const opts = {
    address: app.settings.TEMPORAL_ADDRESS!,
    namespace: app.settings.TEMPORAL_NAMESPACE,
    taskQueue: queue,
  };
  const on = structuredClone({ chatplat_a: app.settings.chatplat_a, chatplat_b: app.settings.chatplat_b });
  on.chatplat_a.org_sync_interval_minutes = 5;
  assert.deepEqual(await ensureOrgSyncSchedules({ ...opts, settings: on }), {
    chatplat_a: 'ensured',
    chatplat_b: 'absent',
  });
  const client = await app.deps.temporal.client();
  const handle = client.schedule.getHandle(orgSyncScheduleId('chatplat_a', queue));
  assert.equal((await handle.describe()).spec.intervals?.[0]?.every, 300_000);
  const off = structuredClone(on);
  off.chatplat_a.org_sync_enabled = false;
  assert.deepEqual(await ensureOrgSyncSchedules({ ...opts, settings: off }), {
    chatplat_a: 'removed',
    chatplat_b: 'absent',
  });
  await assert.rejects(handle.describe(), ScheduleNotFoundError);
  // enabled but unconfigured (no secret): no schedule either
  const unconfigured = structuredClone(on);
  unconfigured.chatplat_a.app_secret = undefined;
  assert.deepEqual(await ensureOrgSyncSchedules({ ...opts, settings: unconfigured }), {
    chatplat_a: 'absent',
    chatplat_b: 'absent',
  });
});
