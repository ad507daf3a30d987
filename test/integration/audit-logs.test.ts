// Audit logs: the three paths, every filter, the default page size 100, export as JSON and CSV, a
// user's activity, the tenant scope for non-system-admin readers, and what the writer fills in.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditRepository } from '../../db/repositories/audit.ts';
import { writeAudit } from '../../services/audit.ts';
import { createTenant, createUser } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;
let A: number;
let B: number;
let managerA: Session;
let managerAId: number;

const row = (over: Partial<Parameters<ReturnType<typeof auditRepository>['insert']>[0]>) => ({
  userId: null,
  tenantId: null,
  username: null,
  action: 'TEST_EVENT',
  severity: 'info',
  resourceType: 'test',
  resourceId: null,
  details: null,
  ipAddress: null,
  success: true,
  requestId: null,
  targetTenantId: null,
  timestamp: new Date(),
  ...over,
});

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  A = await createTenant(app, admin);
  B = await createTenant(app, admin);
  const m = await createUser(app, admin, { role: 'manager', tenant_id: A });
  managerAId = m.id;
  managerA = await login(app.url, m.username, m.password);
  const repo = auditRepository(app.database);
  // 120 rows in tenant A for one user, 30 in tenant B, spread over dates; a few special ones.
  for (let i = 0; i < 120; i++)
    await repo.insert(
      row({
        tenantId: A,
        userId: managerAId,
        username: 'bulk-a',
        action: i % 2 ? 'BULK_ODD' : 'BULK_EVEN',
        timestamp: new Date(Date.UTC(2026, 0, 1 + (i % 10), 12)),
      }),
    );
  for (let i = 0; i < 30; i++)
    await repo.insert(
      row({
        tenantId: B,
        username: 'bulk-b',
        action: 'BULK_B',
        severity: 'warning',
        timestamp: new Date(Date.UTC(2026, 0, 5, 12)),
      }),
    );
  await repo.insert(
    row({
      tenantId: null,
      targetTenantId: A,
      username: 'platform',
      action: 'CROSS_INTO_A',
      resourceType: 'api_key',
    }),
  );
  await repo.insert(
    row({
      tenantId: A,
      username: '=cmd|evil',
      action: 'CSV_TRICK',
      details: JSON.stringify({ note: 'has "quotes", commas\nand lines' }),
    }),
  );
});
after(() => app?.close());

test('the three paths answer the same, with the default page size of 100', async () => {
  const bodies = [];
  for (const p of ['/api/audit/logs', '/api/audit-logs', '/api/governance/audit-logs']) {
    const r = await api(app.url, 'GET', p, { auth: admin });
    assert.equal(r.status, 200);
    assert.equal(r.body.logs.length, 100);
    assert.equal(r.body.limit, 100);
    assert.equal(r.body.offset, 0);
    assert.ok(r.body.total > 150);
    bodies.push(r.body.logs.map((l: any) => l.id));
  }
  assert.deepEqual(bodies[0], bodies[1]);
  assert.deepEqual(bodies[0], bodies[2]);
});

test('filters: user_id, username, action, resource_type, severity, dates, limit and offset', async () => {
  const q = async (qs: string) => (await api(app.url, 'GET', `/api/audit/logs?${qs}`, { auth: admin })).body;
  assert.equal((await q(`user_id=${managerAId}`)).total, 121, '120 seeded rows and the manager login');
  assert.equal((await q('username=bulk-b')).total, 30);
  assert.equal((await q('action=BULK_ODD')).total, 60);
  assert.equal((await q('resource_type=api_key&action=CROSS_INTO_A')).total, 1);
  assert.equal((await q('severity=warning&username=bulk-b')).total, 30);
  assert.equal((await q('username=bulk-a&start_date=2026-01-03&end_date=2026-01-04')).total, 24);
  assert.equal((await q('username=bulk-a&end_date=2026-01-01')).total, 12, 'end_date includes the whole day');
  assert.equal((await q('username=bulk-a&start_date=2026-01-10T00:00:00Z')).total, 12);
  const page = await q('username=bulk-a&limit=7&offset=3');
  const all = await q('username=bulk-a&limit=10');
  assert.equal(page.logs.length, 7);
  assert.deepEqual(
    page.logs.slice(0, 7).map((l: any) => l.id),
    (await q('username=bulk-a&limit=1000')).logs.slice(3, 10).map((l: any) => l.id),
  );
  assert.equal(all.logs.length, 10);
  for (const bad of [
    'limit=0',
    'limit=abc',
    'offset=-1',
    'start_date=yesterday',
    'user_id=x',
    'start_date=2026-02-01&end_date=2026-01-01',
  ])
    assert.equal((await api(app.url, 'GET', `/api/audit/logs?${bad}`, { auth: admin })).status, 400, bad);
});

test('non-system-admin readers see only their tenant (and actions targeting it)', async () => {
  const r = await api(app.url, 'GET', '/api/audit/logs?limit=1000', { auth: managerA });
  assert.equal(r.status, 200);
  assert.ok(r.body.logs.length > 0);
  assert.ok(r.body.logs.every((l: any) => l.tenant_id === A || l.target_tenant_id === A));
  assert.ok(r.body.logs.some((l: any) => l.action === 'CROSS_INTO_A'));
  assert.ok(!r.body.logs.some((l: any) => l.username === 'bulk-b'));
  assert.equal(
    (await api(app.url, 'GET', '/api/audit/logs?username=bulk-b', { auth: managerA })).body.total,
    0,
  );
  const exp = await api(app.url, 'GET', '/api/audit/logs/export', { auth: managerA });
  assert.ok(exp.body.logs.every((l: any) => l.tenant_id === A || l.target_tenant_id === A));
});

test('export: JSON and CSV with their content types; CSV is quoted and formula-safe', async () => {
  const json = await api(app.url, 'GET', '/api/audit/logs/export?start_date=2026-01-01&end_date=2026-01-02', {
    auth: admin,
  });
  assert.match(json.res.headers.get('content-type')!, /^application\/json/);
  assert.match(json.res.headers.get('content-disposition')!, /attachment; filename="audit-logs-.*\.json"/);
  assert.equal(json.body.count, 24);
  const csv = await api(app.url, 'GET', '/api/audit/logs/export?format=csv', { auth: admin });
  assert.match(csv.res.headers.get('content-type')!, /^text\/csv; charset=utf-8/);
  assert.match(csv.res.headers.get('content-disposition')!, /\.csv"/);
  const lines = (csv.body as string).split('\r\n');
  assert.equal(
    lines[0],
    'id,timestamp,user_id,tenant_id,username,action,severity,resource_type,resource_id,success,ip_address,request_id,target_tenant_id,details',
  );
  const trick = (csv.body as string).split('\r\n').find((l) => l.includes('CSV_TRICK'))!;
  assert.ok(trick.includes(`'=cmd|evil`), 'formula cell neutralised');
  assert.ok(trick.includes('"{""note"":'), 'quotes doubled inside a quoted cell');
  assert.equal((await api(app.url, 'GET', '/api/audit/logs/export?format=xml', { auth: admin })).status, 400);
});

test('user activity summarises the last N days, within the caller scope', async () => {
  const u = await createUser(app, admin, { role: 'user', tenant_id: A });
  const s = await login(app.url, u.username, u.password);
  await api(app.url, 'POST', '/api/auth/logout', { auth: s });
  const r = await api(app.url, 'GET', `/api/audit/user/${u.id}/activity?days=7`, { auth: admin });
  assert.equal(r.status, 200);
  assert.equal(r.body.user_id, u.id);
  assert.equal(r.body.days, 7);
  assert.equal(r.body.by_action.LOGIN, 1);
  assert.equal(r.body.by_action.LOGOUT, 1);
  assert.equal(r.body.total_actions, 2);
  assert.equal(
    (await api(app.url, 'GET', `/api/audit/user/${u.id}/activity`, { auth: managerA })).status,
    200,
  );
  const other = await createUser(app, admin, { role: 'user', tenant_id: B });
  assert.equal(
    (await api(app.url, 'GET', `/api/audit/user/${other.id}/activity`, { auth: managerA })).status,
    403,
  );
  assert.equal((await api(app.url, 'GET', '/api/audit/user/987654/activity', { auth: admin })).status, 404);
});

test('the writer fills actor, tenant, address and request id; a failed login is recorded without the password', async () => {
  const r = await api(app.url, 'POST', '/api/auth/login', {
    body: { username: ADMIN.username, password: 'not-the-password-x' },
  });
  const requestId = r.res.headers.get('x-request-id');
  const logs = await api(app.url, 'GET', '/api/audit/logs?action=LOGIN_FAILED', { auth: admin });
  const rec = logs.body.logs.find((l: any) => l.request_id === requestId);
  assert.ok(rec);
  assert.equal(rec.username, ADMIN.username);
  assert.equal(rec.success, false);
  assert.match(rec.ip_address, /127\.0\.0\.1/);
  assert.ok(!JSON.stringify(logs.body).includes('not-the-password-x'));

  await writeAudit(app.deps, null, { action: 'BACKGROUND_EVENT', details: { n: 1 } });
  const bg = (await api(app.url, 'GET', '/api/audit/logs?action=BACKGROUND_EVENT', { auth: admin })).body
    .logs[0];
  assert.deepEqual(
    [bg.user_id, bg.request_id, bg.severity, bg.success, bg.details],
    [null, null, 'info', true, { n: 1 }],
  );
});
