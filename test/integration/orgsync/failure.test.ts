// A sync the platform refuses: a wrong app secret is a final auth error (no retries: one token
// request), the workflow fails, the run row says `failed` with the platform's reason (never the
// secret), the staged snapshot is cleared and nothing was written. A `running` row whose workflow is
// gone does not block the next start; a run of an unconfigured platform is recorded as failed; two
// runs at once for one tenant leave every platform user with exactly one account.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { startChatplatBFake } from '../../fixtures/chatplat-b-fake.ts';
import type { FakeControls } from '../../fixtures/chatplat-org.ts';
import { createTenant } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session } from '../../support/session.ts';
import { baseOrg, orgState } from './org-state.ts';

const WRONG = 'the-wrong-secret-77aa';
let app: TestApp;
let fake: FakeControls;
let admin: Session;
let tenant: number;

before(async () => {
  fake = await startChatplatBFake({ org: baseOrg(), appKey: 'key-b', appSecret: 'the-right-secret' });
  app = await startTestApp({
    worker: true,
    env: {
      SVC_CHATPLAT_B__APP_KEY: 'key-b',
      SVC_CHATPLAT_B__APP_SECRET: WRONG,
      SVC_CHATPLAT_B__API_BASE_URL: fake.url,
    },
  });
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  tenant = await createTenant(app, admin);
});
after(async () => {
  await app?.close();
  await fake?.close();
});

test('a wrong secret fails the run at once, recorded without the secret', async () => {
  const r = await api(app.url, 'POST', '/api/admin/chatplat_b/sync', {
    auth: admin,
    body: { tenant_id: tenant },
  });
  assert.equal(r.status, 202);
  const client = await app.deps.temporal.client();
  const handle = client.workflow.getHandle(r.body.run_id);
  await assert.rejects(handle.result(), WorkflowFailedError);
  assert.equal(fake.tokenRequests, 1, 'an auth failure is not retried');
  const run = await api(app.url, 'GET', `/api/admin/chatplat_b/sync/${r.body.run_id}`, { auth: admin });
  assert.equal(run.body.status, 'failed');
  assert.match(run.body.error, /code 10014/);
  assert.ok(run.body.finished_at);
  const everything = [
    JSON.stringify(run.body),
    JSON.stringify(await handle.fetchHistory()),
    app.logs.join('\n'),
  ];
  for (const t of everything) assert.ok(!t.includes(WRONG));
  assert.equal(
    Number((await app.database.sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM org_sync_items'))[0]!.n),
    0,
  );
  const state = await orgState(app, tenant, 'chatplat_b');
  assert.deepEqual([state.teams.length, state.users.length], [0, 0]);
});

test('a stale running row (its workflow gone) does not block a new run', async () => {
  await app.database.sql.query(
    "INSERT INTO org_sync_runs (run_id, platform, tenant_id, status) VALUES ('orgsync-stale-run', 'chatplat_b', ?, 'running')",
    [tenant],
  );
  app.deps.settings.chatplat_b.app_secret = 'the-right-secret';
  const r = await api(app.url, 'POST', '/api/admin/chatplat_b/sync', {
    auth: admin,
    body: { tenant_id: tenant },
  });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  const stale = await api(app.url, 'GET', '/api/admin/chatplat_b/sync/orgsync-stale-run', { auth: admin });
  assert.equal(stale.body.status, 'failed');
  assert.equal(stale.body.error, 'the run ended without closing');
  // the worker reads settings at each activity: the corrected secret is used by this run
  const client = await app.deps.temporal.client();
  const counts = await client.workflow.getHandle(r.body.run_id).result();
  assert.equal(counts.users_provisioned, 6);
});

test('a run of an unconfigured platform (e.g. a schedule left after the secret was removed) fails and is recorded', async () => {
  const client = await app.deps.temporal.client();
  const runId = `orgsync-direct-${Date.now()}`;
  const handle = await client.workflow.start('orgSyncWorkflow', {
    workflowId: runId,
    taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
    args: [{ platform: 'chatplat_a', tenantId: tenant }],
  });
  await assert.rejects(handle.result(), (err) => {
    assert.ok(err instanceof WorkflowFailedError);
    assert.equal((err.cause as { type?: string }).type, 'OrgSyncNotConfigured');
    return true;
  });
  const run = await api(app.url, 'GET', `/api/admin/chatplat_a/sync/${runId}`, { auth: admin });
  assert.equal(run.body.status, 'failed');
  assert.match(run.body.error, /chatplat_a is not configured/);
});

test('two runs at once for the same tenant (a schedule and an admin) leave no duplicate account', async () => {
  const fresh = await createTenant(app, admin);
  app.deps.settings.chatplat_b.app_secret = 'the-right-secret';
  // People the platform has not been synced with before (identities are global).
  const org = baseOrg();
  for (const u of org.users) {
    u.id = `race-${u.id}`;
    u.email = u.email ? `race.${u.email}` : null;
  }
  fake.org = org;
  const client = await app.deps.temporal.client();
  const handles = await Promise.all(
    [1, 2].map((n) =>
      client.workflow.start('orgSyncWorkflow', {
        workflowId: `orgsync-race-${n}-${Date.now()}`,
        taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
        args: [{ platform: 'chatplat_b', tenantId: fresh }],
      }),
    ),
  );
  const results = await Promise.all(handles.map((h) => h.result()));
  assert.equal(results[0]!.users_provisioned + results[1]!.users_provisioned, 6);
  const state = await orgState(app, fresh, 'chatplat_b');
  assert.equal(state.users.length, 6);
  assert.equal(state.teams.length, 4);
  assert.equal(state.memberships.length, 6);
  const n = await app.database.sql.query<{ n: number }>(
    'SELECT COUNT(*) AS n FROM users WHERE tenant_id = ?',
    [fresh],
  );
  assert.equal(Number(n[0]!.n), 6, 'no account without its identity');
});
