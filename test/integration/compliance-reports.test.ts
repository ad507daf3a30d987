// Compliance reports and audit analysis over real HTTP and a real database: report types, generation
// (json and formula-safe csv, defaults, every validation error), saved reports and their tenant
// scope, audit patterns, anomalies, the security score and a user's profile, admin-only access, and
// the audit record of report generation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditRepository } from '../../db/repositories/audit.ts';
import { complianceReportsRepository } from '../../db/repositories/compliance/reports.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, type Session } from '../support/session.ts';

let app: TestApp;
let cast: Cast;
let adminA: Session;
let adminB: Session;
let platform: Session;
const DAY = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);

const audit = (over: Record<string, unknown>) =>
  auditRepository(app.database).insert({
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
  cast = await buildCast(app);
  adminA = cast.actors.tenant_admin.session!;
  adminB = cast.actors.other_tenant_admin.session!;
  platform = cast.admin;
  const userA = cast.actors.user.id!;
  const userB = cast.actors.other_tenant_admin.id!;
  // Tenant A: steady activity of the user over 10 days and one burst day of the manager.
  for (let d = 1; d <= 10; d++)
    for (let i = 0; i < 3; i++)
      await audit({
        tenantId: cast.tenantA,
        userId: userA,
        username: 'ua',
        action: 'A_EVENT',
        timestamp: new Date(Date.now() - d * DAY),
      });
  for (let i = 0; i < 50; i++)
    await audit({
      tenantId: cast.tenantA,
      userId: cast.actors.manager.id,
      username: 'burst',
      action: 'A_BURST',
      timestamp: new Date(Date.now() - 2 * DAY),
    });
  await audit({
    tenantId: cast.tenantA,
    userId: userA,
    username: '=HYPERLINK("x")',
    action: 'LOGIN_FAILED',
    success: false,
  });
  await audit({
    tenantId: cast.tenantA,
    userId: userA,
    username: 'ua',
    action: 'LOGIN_LOCKED',
    severity: 'warning',
  });
  // Tenant B: its own events, never visible to A.
  for (let i = 0; i < 7; i++)
    await audit({ tenantId: cast.tenantB, userId: userB, username: 'ub', action: 'B_ONLY' });
  for (const [tenant, tokens, date] of [
    [cast.tenantA, 100, daysAgo(1)],
    [cast.tenantA, 50, daysAgo(2)],
    [cast.tenantB, 9000, daysAgo(1)],
  ] as const)
    await app.database.sql.query(
      'INSERT INTO daily_usage (tenant_id, date, tool_name, host_name, tokens_used, request_count) VALUES (?, ?, ?, ?, ?, ?)',
      [tenant, date, 'cli_alpha', 'h', tokens, 2],
    );
});
after(() => app?.close());

const post = (auth: Session, body: unknown) =>
  api(app.url, 'POST', '/api/compliance/reports', { auth, body });

test('report types: admins only, with descriptions', async () => {
  const r = await api(app.url, 'GET', '/api/compliance/reports', { auth: adminA });
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.body.report_types.map((t: { type: string }) => t.type),
    ['usage_summary', 'audit_activity', 'access_review', 'security_events', 'data_retention'],
  );
  assert.ok(r.body.report_types.every((t: { description: string }) => t.description.length > 10));
  assert.equal((await api(app.url, 'GET', '/api/compliance/reports')).status, 401);
  for (const who of ['manager', 'user', 'readonly'] as const)
    assert.equal(
      (await api(app.url, 'GET', '/api/compliance/reports', { auth: cast.actors[who].session })).status,
      403,
      who,
    );
});

test('generate: every validation error names its field', async () => {
  const ok = { report_type: 'usage_summary', period_start: daysAgo(7), period_end: today };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...ok, report_type: 'nope' }, 'report_type'],
    [{ ...ok, report_type: undefined }, 'report_type'],
    [{ ...ok, period_start: '2026-13-01' }, 'period_start'],
    [{ ...ok, period_end: 'yesterday' }, 'period_end'],
    [{ ...ok, format: 'xml' }, 'format'],
    [{ ...ok, period_start: today, period_end: daysAgo(3) }, 'period_start'],
    [{ ...ok, period_start: '2020-01-01', period_end: '2026-01-01' }, 'period_end'],
  ];
  for (const [body, field] of cases) {
    const r = await post(adminA, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.error, new RegExp(field), JSON.stringify(r.body));
  }
});

test('generate usage_summary (json by default): only the caller tenant, saved, audited', async () => {
  const r = await post(adminA, { report_type: 'usage_summary', period_start: daysAgo(7), period_end: today });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.format, 'json');
  assert.equal(r.body.tenant_id, cast.tenantA);
  assert.equal(r.body.summary.total_tokens, 150);
  assert.equal(r.body.rows.length, 2);
  const all = await post(platform, {
    report_type: 'usage_summary',
    period_start: daysAgo(7),
    period_end: today,
  });
  assert.equal(all.body.summary.total_tokens, 9150);
  assert.equal(all.body.tenant_id, null);

  const saved = await api(app.url, 'GET', `/api/compliance/reports/${r.body.report_id}`, { auth: adminA });
  assert.equal(saved.status, 200);
  assert.equal(saved.body.content.summary.total_tokens, 150);
  assert.equal(saved.body.report_type, 'usage_summary');
  // Another tenant's admin: 404; the platform admin: 200.
  assert.equal(
    (await api(app.url, 'GET', `/api/compliance/reports/${r.body.report_id}`, { auth: adminB })).status,
    404,
  );
  assert.equal(
    (await api(app.url, 'GET', `/api/compliance/reports/${r.body.report_id}`, { auth: platform })).status,
    200,
  );
  assert.equal(
    (await api(app.url, 'GET', '/api/compliance/reports/rpt_missing', { auth: adminA })).status,
    404,
  );
  // The platform-wide report is invisible to tenant admins.
  assert.equal(
    (await api(app.url, 'GET', `/api/compliance/reports/${all.body.report_id}`, { auth: adminA })).status,
    404,
  );

  const logs = await auditRepository(app.database).list(
    { kind: 'all' },
    { action: 'COMPLIANCE_REPORT_GENERATE' },
    { limit: 10, offset: 0 },
  );
  assert.ok(logs.some((l) => l.resourceId === r.body.report_id && l.tenantId === cast.tenantA));
});

test('a tenant admin cannot target another tenant; the platform admin can', async () => {
  const body = { report_type: 'usage_summary', period_start: daysAgo(7), period_end: today };
  assert.equal((await post(adminA, { ...body, tenant_id: cast.tenantB })).status, 403);
  const b = await post(platform, { ...body, tenant_id: cast.tenantB });
  assert.equal(b.status, 201);
  assert.equal(b.body.summary.total_tokens, 9000);
  assert.equal(
    (await api(app.url, 'GET', `/api/compliance/reports/${b.body.report_id}`, { auth: adminB })).status,
    200,
  );
});

test('csv: formula-safe, and each report type generates', async () => {
  const r = await api(app.url, 'POST', '/api/compliance/reports', {
    auth: adminA,
    body: { report_type: 'security_events', period_start: daysAgo(1), period_end: today, format: 'csv' },
  });
  assert.equal(r.status, 201);
  assert.match(r.res.headers.get('content-type') ?? '', /text\/csv/);
  const id = r.res.headers.get('x-report-id');
  assert.ok(id);
  assert.ok(r.body.includes(`"'=HYPERLINK(""x"")"`), r.body);
  assert.ok(r.body.includes('LOGIN_LOCKED'));
  assert.ok(!r.body.includes('B_ONLY'));
  const saved = await api(app.url, 'GET', `/api/compliance/reports/${id}`, { auth: adminA });
  assert.equal(saved.body.format, 'csv');
  assert.equal(saved.body.content, r.body);
  for (const type of ['audit_activity', 'access_review', 'data_retention']) {
    const g = await post(adminA, { report_type: type, period_start: daysAgo(30), period_end: today });
    assert.equal(g.status, 201, type);
    assert.ok(!JSON.stringify(g.body).includes('B_ONLY'), type);
  }
  const access = await post(adminA, {
    report_type: 'access_review',
    period_start: daysAgo(30),
    period_end: today,
  });
  assert.ok(access.body.rows.every((u: { tenant_id: number }) => u.tenant_id === cast.tenantA));
  assert.ok(access.body.rows.some((u: { user_id: number }) => u.user_id === cast.actors.user.id));
});

test('saved reports: newest first, tenant scoped, paginated; a caller without tenant sees none', async () => {
  const a = await api(app.url, 'GET', '/api/compliance/reports/saved', { auth: adminA });
  assert.equal(a.status, 200);
  assert.equal(a.body.limit, 50);
  assert.equal(a.body.offset, 0);
  assert.ok(a.body.reports.length >= 5);
  assert.ok(a.body.reports.every((x: { tenant_id: number }) => x.tenant_id === cast.tenantA));
  assert.ok(a.body.reports.every((x: Record<string, unknown>) => !('content' in x)));
  const b = await api(app.url, 'GET', '/api/compliance/reports/saved', { auth: adminB });
  assert.ok(b.body.reports.every((x: { tenant_id: number }) => x.tenant_id === cast.tenantB));
  const all = await api(app.url, 'GET', '/api/compliance/reports/saved?limit=500', { auth: platform });
  assert.ok(all.body.reports.length > a.body.reports.length);
  const paged = await api(app.url, 'GET', '/api/compliance/reports/saved?limit=1&offset=1', { auth: adminA });
  assert.equal(paged.body.reports[0].report_id, a.body.reports[1].report_id);
  assert.equal(
    (await api(app.url, 'GET', '/api/compliance/reports/saved?limit=0', { auth: adminA })).status,
    400,
  );
  assert.deepEqual(
    await complianceReportsRepository(app.database).list({ kind: 'none' }, { limit: 50, offset: 0 }),
    [],
  );
});

test('audit patterns: the caller tenant only; platform admin sees all', async () => {
  const a = await api(app.url, 'GET', '/api/compliance/audit/patterns', { auth: adminA });
  assert.equal(a.status, 200);
  assert.equal(a.body.days, 30);
  assert.equal(a.body.by_hour.length, 24);
  const actions = a.body.by_action.map((x: { action: string }) => x.action);
  assert.ok(actions.includes('A_BURST') && !actions.includes('B_ONLY'));
  assert.equal(a.body.top_actors[0].user_id, cast.actors.manager.id);
  const failed = a.body.by_action.find((x: { action: string }) => x.action === 'LOGIN_FAILED');
  assert.equal(failed.failure_rate, 1);
  const all = await api(app.url, 'GET', '/api/compliance/audit/patterns', { auth: platform });
  assert.ok(all.body.by_action.some((x: { action: string }) => x.action === 'B_ONLY'));
  const onlyB = await api(app.url, 'GET', `/api/compliance/audit/patterns?tenant_id=${cast.tenantB}`, {
    auth: platform,
  });
  assert.ok(!onlyB.body.by_action.some((x: { action: string }) => x.action === 'A_BURST'));
  assert.equal(
    (await api(app.url, 'GET', '/api/compliance/audit/patterns?days=0', { auth: adminA })).status,
    400,
  );
  assert.equal(
    (await api(app.url, 'GET', `/api/compliance/audit/patterns?tenant_id=${cast.tenantB}`, { auth: adminA }))
      .status,
    403,
  );
  assert.equal(
    (await api(app.url, 'GET', '/api/compliance/audit/patterns', { auth: cast.actors.manager.session }))
      .status,
    403,
  );
});

test('audit anomalies: the burst day is flagged by robust z-score', async () => {
  const a = await api(app.url, 'GET', '/api/compliance/audit/anomalies', { auth: adminA });
  assert.equal(a.status, 200);
  assert.equal(a.body.method, 'robust_z_score');
  assert.equal(a.body.threshold, 3.5);
  assert.equal(a.body.anomalies.length, 1, JSON.stringify(a.body));
  assert.equal(a.body.anomalies[0].user_id, cast.actors.manager.id);
  assert.equal(a.body.anomalies[0].count, 50);
  const b = await api(app.url, 'GET', '/api/compliance/audit/anomalies', { auth: adminB });
  assert.equal(b.body.anomalies.length, 0);
  assert.match(
    (await api(app.url, 'GET', '/api/compliance/audit/anomalies?threshold=-1', { auth: adminA })).body.error,
    /threshold/,
  );
});

test('security score: components, weights and signals of the tenant', async () => {
  const a = await api(app.url, 'GET', '/api/compliance/audit/security-score', { auth: adminA });
  assert.equal(a.status, 200, JSON.stringify(app.logs.filter((l) => l.includes('"level":50')).slice(-2)));
  assert.equal(a.body.tenant_id, cast.tenantA);
  assert.ok(a.body.score >= 0 && a.body.score <= 100);
  assert.deepEqual(Object.keys(a.body.weights), [
    'lockouts',
    'admin_ratio',
    'sso_adoption',
    'stale_keys',
    'proxy_refusals',
  ]);
  assert.equal(a.body.signals.lockouts, 1);
  // Tenant A: tenant_admin, manager, user, readonly; no SSO identities.
  assert.equal(a.body.signals.active_users, 4);
  assert.equal(a.body.signals.administrators, 1);
  assert.equal(a.body.components.find((c: { name: string }) => c.name === 'sso_adoption').penalty, 1);
  const b = await api(app.url, 'GET', '/api/compliance/audit/security-score', { auth: adminB });
  assert.equal(b.body.signals.lockouts, 0);
  assert.equal(b.body.signals.active_users, 1);
});

test('user profile: in scope 200, another tenant 404, unknown 404, bad id 400', async () => {
  const url = (id: unknown) => `/api/compliance/audit/user/${id}/profile`;
  const p = await api(app.url, 'GET', url(cast.actors.user.id), { auth: adminA });
  assert.equal(p.status, 200);
  assert.equal(p.body.user_id, cast.actors.user.id);
  const count = (action: string) =>
    p.body.by_action.find((a: { action: string }) => a.action === action)?.total;
  assert.deepEqual(
    [count('A_EVENT'), count('LOGIN_FAILED'), count('LOGIN_LOCKED'), count('A_BURST')],
    [30, 1, 1, undefined],
  );
  assert.equal(p.body.failed_events, 1);
  assert.equal(p.body.active_days >= 10, true);
  assert.equal(
    (await api(app.url, 'GET', url(cast.actors.other_tenant_admin.id), { auth: adminA })).status,
    404,
  );
  assert.equal((await api(app.url, 'GET', url(cast.actors.user.id), { auth: adminB })).status, 404);
  assert.equal((await api(app.url, 'GET', url(cast.actors.user.id), { auth: platform })).status, 200);
  assert.equal((await api(app.url, 'GET', url(999999), { auth: adminA })).status, 404);
  assert.equal((await api(app.url, 'GET', url('abc'), { auth: adminA })).status, 400);
});
