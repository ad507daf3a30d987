// The admin quota API (issue 10 item 6) on the real API and database: GET /api/quota/status/all,
// GET /api/admin/quota/usage, GET /api/quota/alerts and POST /api/quota/alerts/:id/acknowledge.
// Proves the figures come from the one accounting (uploads count towards quotas), the role refusals,
// tenant isolation (tenant A's admin never sees tenant B's users, tenants or alerts; a system admin
// sees all; an admin without a tenant sees nothing), the 80/90/100 % alerts raised once per period
// (a second raise adds nothing), and acknowledgement (recorded, audited, 404 outside the scope).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { quotaServiceFor } from '../../services/quota.ts';
import { quotaAlertsService } from '../../services/quota-alerts.ts';
import { buildCast, type Cast, createUser, PASSWORD } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { setUserQuota, today, uploadRequests } from '../support/quota.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let cast: Cast;
let alice: { id: number; username: string };
let bob: { id: number; username: string };
let noTenantAdmin: Session;

const as = (who: Session | undefined, method: string, path: string, body?: unknown) =>
  api(app.url, method, path, { auth: who, body });
const A = () => cast.actors.tenant_admin.session!;
const B = () => cast.actors.other_tenant_admin.session!;
const P = () => cast.admin;

const raiseAlerts = async () =>
  quotaAlertsService(app.deps).raiseFor(await quotaServiceFor(app.deps).statusOfAll({ kind: 'all' }));

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  alice = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  bob = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantB });
  await setUserQuota(app, cast.admin, alice.id, { daily_request_quota: 10, daily_token_quota: 1 });
  await setUserQuota(app, cast.admin, bob.id, { daily_request_quota: 10 });
  await uploadRequests(app, alice.username, 9, 1000);
  await uploadRequests(app, bob.username, 10, 1000);
  // An admin whose tenant was taken away after login (login itself refuses a user without a tenant).
  const orphan = await createUser(app, cast.admin, { role: 'tenant_admin', tenant_id: cast.tenantA });
  noTenantAdmin = await login(app.url, orphan.username, PASSWORD);
  await app.database.sql.query('UPDATE users SET tenant_id = NULL WHERE id = ?', [orphan.id]);
});
after(() => app?.close());

test('status/all: every user and tenant against the limits, from the accounting; tenant-scoped', async () => {
  const all = await as(P(), 'GET', '/api/quota/status/all');
  assert.equal(all.status, 200, JSON.stringify(all.body));
  assert.equal(all.body.date, today());
  assert.equal(all.body.month, `${today().slice(0, 7)}-01`);
  const a = all.body.users.find((u: any) => u.user_id === alice.id);
  const b = all.body.users.find((u: any) => u.user_id === bob.id);
  assert.deepEqual(
    [a.tenant_id, a.daily.requests_used, a.daily.request_limit, a.daily.tokens_used, a.daily.token_limit],
    [cast.tenantA, 9, 10, 9000, 1_000_000],
    'token quotas are stored in millions and shown in tokens',
  );
  assert.equal(a.monthly.requests_used, 9);
  assert.equal(a.monthly.request_limit, null, 'no monthly limit set');
  assert.equal(a.within_quota, true);
  assert.deepEqual([b.within_quota, b.exceeded], [false, ['user_daily_requests']]);
  const ta = all.body.tenants.find((t: any) => t.tenant_id === cast.tenantA);
  assert.deepEqual(
    [ta.daily.requests_used, ta.daily.request_limit, ta.monthly.token_limit],
    [9, 10_000, 30_000_000],
    "the tenant's use against the spec's default limits",
  );
  assert.ok(all.body.tenants.some((t: any) => t.tenant_id === cast.tenantB));

  const mine = await as(A(), 'GET', '/api/quota/status/all');
  assert.equal(mine.status, 200);
  assert.ok(mine.body.users.some((u: any) => u.user_id === alice.id));
  assert.ok(
    mine.body.users.every((u: any) => u.tenant_id === cast.tenantA),
    'only tenant A users',
  );
  assert.deepEqual(
    mine.body.tenants.map((t: any) => t.tenant_id),
    [cast.tenantA],
  );
  const theirs = await as(B(), 'GET', '/api/quota/status/all');
  assert.ok(theirs.body.users.some((u: any) => u.user_id === bob.id));
  assert.ok(!theirs.body.users.some((u: any) => u.user_id === alice.id));

  const none = await as(noTenantAdmin, 'GET', '/api/quota/status/all');
  assert.equal(none.status, 200);
  assert.deepEqual([none.body.users, none.body.tenants], [[], []]);

  const legacy = await as(cast.actors.legacy_admin.session, 'GET', '/api/quota/status/all');
  assert.ok(
    legacy.body.users.some((u: any) => u.user_id === bob.id),
    'legacy admin sees all tenants',
  );
});

test('status/all and admin/quota/usage refuse non-admins', async () => {
  for (const path of ['/api/quota/status/all', '/api/admin/quota/usage', '/api/quota/alerts']) {
    assert.equal((await as(undefined, 'GET', path)).status, 401, path);
    for (const who of ['manager', 'user', 'readonly'] as const) {
      const r = await as(cast.actors[who].session, 'GET', path);
      assert.equal(r.status, 403, `${who} ${path}`);
      assert.equal(r.body.error, 'Admin access required');
    }
  }
  const ack = await as(cast.actors.manager.session, 'POST', '/api/quota/alerts/1/acknowledge');
  assert.equal(ack.status, 403);
  assert.equal((await as(undefined, 'POST', '/api/quota/alerts/1/acknowledge')).status, 401);
});

test('admin/quota/usage: every user of the scope for a day; malformed date is 400 naming it', async () => {
  const r = await as(P(), 'GET', '/api/admin/quota/usage');
  assert.equal(r.status, 200);
  assert.equal(r.body.date, today());
  assert.equal(r.body.total, r.body.users.length);
  const b = r.body.users.find((u: any) => u.user_id === bob.id);
  assert.deepEqual([b.daily.requests_used, b.daily.tokens_used, b.monthly.requests_used], [10, 10_000, 10]);
  assert.equal(r.body.tenants, undefined, 'users only');

  const scoped = await as(A(), 'GET', '/api/admin/quota/usage');
  assert.ok(scoped.body.users.length > 0);
  assert.ok(scoped.body.users.every((u: any) => u.tenant_id === cast.tenantA));
  assert.ok(!scoped.body.users.some((u: any) => u.user_id === bob.id));
  assert.deepEqual((await as(noTenantAdmin, 'GET', '/api/admin/quota/usage')).body.users, []);

  const past = await as(P(), 'GET', '/api/admin/quota/usage?date=2001-02-03');
  assert.equal(past.status, 200);
  assert.equal(past.body.month, '2001-02-01');
  const pb = past.body.users.find((u: any) => u.user_id === bob.id);
  assert.deepEqual([pb.daily.requests_used, pb.monthly.requests_used], [0, 0]);

  for (const bad of ['2026-13-01', '2026-02-30', 'yesterday', '2026-1-1']) {
    const e = await as(P(), 'GET', `/api/admin/quota/usage?date=${bad}`);
    assert.equal(e.status, 400, bad);
    assert.match(e.body.error, /^date: /);
  }
});

test('alerts: raised once per period at the highest threshold reached, listed per tenant', async () => {
  const first = await raiseAlerts();
  const mineKeys = first
    .map((a) => a.dedupeKey)
    .filter((k) => k.startsWith(`user:${alice.id}:`) || k.startsWith(`user:${bob.id}:`));
  assert.deepEqual(mineKeys.sort(), [
    `user:${alice.id}:daily_requests:90:${today()}`,
    `user:${bob.id}:daily_requests:100:${today()}`,
  ]);
  assert.deepEqual(await raiseAlerts(), [], 'a second raise with the same figures adds nothing');

  const inAlerts = await app.database.sql.query<Record<string, unknown>>(
    `SELECT alert_id, alert_type, severity, user_id, tenant_id, title FROM alerts WHERE user_id IN (?, ?) ORDER BY user_id`,
    [alice.id, bob.id],
  );
  assert.deepEqual(
    inAlerts.map((r) => [r.alert_id, r.alert_type, r.severity, Number(r.user_id), Number(r.tenant_id)]),
    [
      [`quota:user:${alice.id}:daily_requests:90:${today()}`, 'quota', 'warning', alice.id, cast.tenantA],
      [`quota:user:${bob.id}:daily_requests:100:${today()}`, 'quota', 'critical', bob.id, cast.tenantB],
    ].sort((x, y) => (x[3] as number) - (y[3] as number)),
  );

  // One more request takes alice to 100 %: a new (critical) alert; 90 % is not raised again.
  await uploadRequests(app, alice.username, 1);
  const next = await raiseAlerts();
  assert.deepEqual(
    next.map((a) => [a.dedupeKey, a.severity]),
    [[`user:${alice.id}:daily_requests:100:${today()}`, 'critical']],
  );

  const all = await as(P(), 'GET', '/api/quota/alerts');
  assert.equal(all.status, 200);
  assert.deepEqual([all.body.limit, all.body.offset], [50, 0], 'spec defaults for alerts');
  const ids = (r: any) => r.body.alerts.map((x: any) => x.user_id);
  assert.ok(ids(all).includes(alice.id) && ids(all).includes(bob.id));
  assert.equal(all.body.total, all.body.alerts.length);
  const top = all.body.alerts[0];
  assert.equal(top.user_id, alice.id, 'newest first');
  assert.deepEqual(
    [
      top.quota_type,
      top.period,
      top.period_key,
      top.threshold,
      top.current_usage,
      top.quota_limit,
      top.percentage,
    ],
    ['daily_requests', 'daily', today(), 100, 10, 10, 100],
  );
  assert.equal(top.acknowledged, false);

  const a = await as(A(), 'GET', '/api/quota/alerts');
  assert.ok(a.body.alerts.length >= 2);
  assert.ok(
    a.body.alerts.every((x: any) => x.tenant_id === cast.tenantA),
    'tenant A admin: tenant A only',
  );
  const b = await as(B(), 'GET', '/api/quota/alerts');
  assert.ok(b.body.alerts.some((x: any) => x.user_id === bob.id));
  assert.ok(b.body.alerts.every((x: any) => x.tenant_id === cast.tenantB));
  assert.deepEqual((await as(noTenantAdmin, 'GET', '/api/quota/alerts')).body.alerts, []);

  const page = await as(P(), 'GET', '/api/quota/alerts?limit=1&offset=1');
  assert.deepEqual([page.body.alerts.length, page.body.alerts[0].id], [1, all.body.alerts[1].id]);
  const bad = await as(P(), 'GET', '/api/quota/alerts?acknowledged=maybe');
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^acknowledged: /);
  assert.equal((await as(P(), 'GET', '/api/quota/alerts?limit=0')).status, 400);
});

test('acknowledge: recorded with who and when, audited; 404 for unknown and other-tenant alerts', async () => {
  const list = (await as(P(), 'GET', '/api/quota/alerts?acknowledged=false')).body.alerts;
  const alices = list.find((x: any) => x.user_id === alice.id);
  const bobs = list.find((x: any) => x.user_id === bob.id);

  const cross = await as(A(), 'POST', `/api/quota/alerts/${bobs.id}/acknowledge`);
  assert.deepEqual([cross.status, cross.body.error], [404, 'Quota alert not found']);
  assert.equal((await as(noTenantAdmin, 'POST', `/api/quota/alerts/${alices.id}/acknowledge`)).status, 404);
  assert.equal((await as(P(), 'POST', '/api/quota/alerts/2147483000/acknowledge')).status, 404);
  const malformed = await as(P(), 'POST', '/api/quota/alerts/abc/acknowledge');
  assert.equal(malformed.status, 400);
  assert.match(malformed.body.error, /^alert_id: /);

  const ok = await as(A(), 'POST', `/api/quota/alerts/${alices.id}/acknowledge`);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.success, true);
  assert.equal(ok.body.alert.acknowledged, true);
  assert.equal(ok.body.alert.acknowledged_by, cast.actors.tenant_admin.id);
  assert.ok(Math.abs(Date.parse(ok.body.alert.acknowledged_at) - Date.now()) < 60_000);
  // A second acknowledgement keeps the first one's record.
  const again = await as(P(), 'POST', `/api/quota/alerts/${alices.id}/acknowledge`);
  assert.equal(again.status, 200);
  assert.equal(again.body.alert.acknowledged_by, cast.actors.tenant_admin.id);

  const open = (await as(P(), 'GET', '/api/quota/alerts?acknowledged=false')).body.alerts;
  assert.ok(!open.some((x: any) => x.id === alices.id));
  const acked = (await as(P(), 'GET', '/api/quota/alerts?acknowledged=true')).body.alerts;
  assert.deepEqual(
    acked.map((x: any) => x.id),
    [alices.id],
  );

  const audits = await app.database.sql.query<Record<string, unknown>>(
    `SELECT user_id, resource_id, target_tenant_id FROM audit_logs WHERE action = 'QUOTA_ALERT_ACKNOWLEDGE' ORDER BY id`,
  );
  assert.deepEqual(
    audits.map((r) => [Number(r.user_id), String(r.resource_id), Number(r.target_tenant_id)]),
    [
      [cast.actors.tenant_admin.id, String(alices.id), cast.tenantA],
      [cast.admin.user.id, String(alices.id), cast.tenantA],
    ],
  );
});
