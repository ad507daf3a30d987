// Retention over real HTTP and a real database: rules GET/PUT (defaults 90/365, validation ranges,
// tenant targeting), the cleanup's per-table counts (a dry run counts exactly what the real run then
// deletes, per tenant, leaving other tenants and recent rows alone), batch deletion, and audit records.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditRepository } from '../../db/repositories/audit.ts';
import { retentionRepository } from '../../db/repositories/compliance/retention.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, type Session } from '../support/session.ts';

let app: TestApp;
let cast: Cast;
let adminA: Session;
let adminB: Session;
let platform: Session;
const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);
const q = (text: string, params: unknown[] = []) =>
  app.database.sql.query<Record<string, unknown>>(text, params);
const countOf = async (text: string, params: unknown[]) => Number((await q(text, params))[0]?.n);

async function auditAt(tenantId: number, daysOld: number, action = 'OLD_EVENT') {
  await auditRepository(app.database).insert({
    userId: null,
    tenantId,
    username: 'seed',
    action,
    severity: 'info',
    resourceType: 'test',
    resourceId: null,
    details: null,
    ipAddress: null,
    success: true,
    requestId: null,
    targetTenantId: null,
    timestamp: new Date(Date.now() - daysOld * DAY),
  });
}
async function messages(tenantId: number, date: string, n: number, tag: string) {
  for (let i = 0; i < n; i++)
    await q(
      'INSERT INTO daily_messages (date, tool_name, host_name, message_id, role, tenant_id) VALUES (?, ?, ?, ?, ?, ?)',
      [date, 'cli_alpha', 'h', `${tag}-${i}`, 'assistant', tenantId],
    );
}

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  adminA = cast.actors.tenant_admin.session!;
  adminB = cast.actors.other_tenant_admin.session!;
  platform = cast.admin;
});
after(() => app?.close());

const rulesUrl = '/api/compliance/retention/rules';

test('rules: defaults 90/365; a tenant admin sees its tenant, the platform admin every tenant', async () => {
  const a = await api(app.url, 'GET', rulesUrl, { auth: adminA });
  assert.equal(a.status, 200);
  assert.deepEqual(a.body.rules, [
    { tenant_id: cast.tenantA, audit_log_retention_days: 90, data_retention_days: 365 },
  ]);
  assert.equal(a.body.limits.audit_log_retention_days.min, 7);
  const all = await api(app.url, 'GET', rulesUrl, { auth: platform });
  const ids = all.body.rules.map((r: { tenant_id: number }) => r.tenant_id);
  assert.ok(ids.includes(cast.tenantA) && ids.includes(cast.tenantB));
  const one = await api(app.url, 'GET', `${rulesUrl}?tenant_id=${cast.tenantB}`, { auth: platform });
  assert.deepEqual(
    one.body.rules.map((r: { tenant_id: number }) => r.tenant_id),
    [cast.tenantB],
  );
  assert.equal(
    (await api(app.url, 'GET', `${rulesUrl}?tenant_id=${cast.tenantB}`, { auth: adminA })).status,
    403,
  );
  assert.equal((await api(app.url, 'GET', `${rulesUrl}?tenant_id=x`, { auth: platform })).status, 400);
  assert.equal((await api(app.url, 'GET', `${rulesUrl}?tenant_id=999999`, { auth: platform })).status, 404);
  assert.equal((await api(app.url, 'GET', rulesUrl, { auth: cast.actors.manager.session })).status, 403);
});

test('rules: PUT validates ranges and names the field; targets only allowed tenants; audited', async () => {
  const cases: [unknown, string][] = [
    [{ audit_log_retention_days: 6 }, 'audit_log_retention_days'],
    [{ audit_log_retention_days: 3651 }, 'audit_log_retention_days'],
    [{ data_retention_days: 29 }, 'data_retention_days'],
    [{ data_retention_days: 1.5 }, 'data_retention_days'],
    [{ data_retention_days: '60' }, 'data_retention_days'],
    [{}, 'audit_log_retention_days or data_retention_days is required'],
  ];
  for (const [body, field] of cases) {
    const r = await api(app.url, 'PUT', rulesUrl, { auth: adminA, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.body.error, new RegExp(field));
  }
  assert.equal(
    (
      await api(app.url, 'PUT', rulesUrl, {
        auth: adminA,
        body: { tenant_id: cast.tenantB, data_retention_days: 60 },
      })
    ).status,
    403,
  );
  const noTarget = await api(app.url, 'PUT', rulesUrl, { auth: platform, body: { data_retention_days: 60 } });
  assert.equal(noTarget.status, 400);
  assert.equal(noTarget.body.error, 'Target tenant_id is required');

  const ok = await api(app.url, 'PUT', rulesUrl, {
    auth: adminA,
    body: { audit_log_retention_days: 30, data_retention_days: 60 },
  });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, {
    tenant_id: cast.tenantA,
    audit_log_retention_days: 30,
    data_retention_days: 60,
  });
  const partial = await api(app.url, 'PUT', rulesUrl, {
    auth: adminA,
    body: { audit_log_retention_days: 31 },
  });
  assert.equal(partial.body.data_retention_days, 60);
  await api(app.url, 'PUT', rulesUrl, { auth: adminA, body: { audit_log_retention_days: 30 } });
  const back = await api(app.url, 'GET', rulesUrl, { auth: adminA });
  assert.deepEqual(back.body.rules[0], {
    tenant_id: cast.tenantA,
    audit_log_retention_days: 30,
    data_retention_days: 60,
  });
  // B is untouched.
  const b = await api(app.url, 'GET', rulesUrl, { auth: adminB });
  assert.deepEqual(b.body.rules[0].data_retention_days, 365);
  const logs = await auditRepository(app.database).list(
    { kind: 'all' },
    { action: 'COMPLIANCE_RETENTION_RULES_UPDATE' },
    { limit: 10, offset: 0 },
  );
  assert.equal(logs.length, 3);
  assert.ok(logs.every((l) => l.tenantId === cast.tenantA));
});

test('cleanup: dry run counts equal the real run; only expired rows of the tenant go', async () => {
  const userA = cast.actors.user.id!;
  // Tenant A (audit 30 days, data 60 days): expired and kept rows in every table.
  for (let i = 0; i < 3; i++) await auditAt(cast.tenantA, 40);
  for (let i = 0; i < 2; i++) await auditAt(cast.tenantA, 10, 'RECENT');
  await messages(cast.tenantA, daysAgo(100), 4, 'a-old');
  await messages(cast.tenantA, daysAgo(10), 1, 'a-new');
  for (const [date, tool] of [
    [daysAgo(100), 't1'],
    [daysAgo(61), 't2'],
    [daysAgo(59), 't3'],
  ])
    await q(
      'INSERT INTO daily_usage (tenant_id, date, tool_name, host_name, tokens_used) VALUES (?, ?, ?, ?, ?)',
      [cast.tenantA, date, tool, 'h', 10],
    );
  await q('INSERT INTO tenant_usage (tenant_id, date, tokens_used) VALUES (?, ?, ?)', [
    cast.tenantA,
    daysAgo(100),
    5,
  ]);
  await q('INSERT INTO tenant_usage (tenant_id, date, tokens_used) VALUES (?, ?, ?)', [
    cast.tenantA,
    daysAgo(60),
    5,
  ]);
  await q('INSERT INTO user_daily_stats (user_id, date, tokens) VALUES (?, ?, ?)', [userA, daysAgo(100), 5]);
  await q('INSERT INTO quota_usage (user_id, date, period) VALUES (?, ?, ?)', [userA, daysAgo(100), 'daily']);
  await q('INSERT INTO quota_usage (user_id, date, period) VALUES (?, ?, ?)', [userA, daysAgo(1), 'daily']);
  // Tenant B (defaults 90/365): the same ages are kept.
  for (let i = 0; i < 2; i++) await auditAt(cast.tenantB, 40);
  await messages(cast.tenantB, daysAgo(100), 3, 'b-old');

  const url = '/api/compliance/retention/cleanup';
  const expected = {
    audit_logs: 3,
    daily_messages: 4,
    daily_usage: 2,
    tenant_usage: 1,
    usage_uploads: 0,
    user_daily_stats: 1,
    quota_usage: 1,
  };
  const dry = await api(app.url, 'POST', `${url}?dry_run=true`, { auth: adminA });
  assert.equal(dry.status, 200, JSON.stringify(dry.body));
  assert.equal(dry.body.dry_run, true);
  assert.deepEqual(dry.body.tables, expected);
  assert.equal(dry.body.total, 12);
  assert.deepEqual(
    dry.body.tenants.map((t: { tenant_id: number }) => t.tenant_id),
    [cast.tenantA],
  );
  assert.equal(dry.body.tenants[0].data_before, daysAgo(60));
  // Nothing was deleted by the dry run.
  assert.equal(
    await countOf('SELECT COUNT(*) AS n FROM daily_messages WHERE tenant_id = ?', [cast.tenantA]),
    5,
  );

  const real = await api(app.url, 'POST', url, { auth: adminA }); // dry_run defaults to false
  assert.equal(real.status, 200);
  assert.equal(real.body.dry_run, false);
  assert.deepEqual(real.body.tables, dry.body.tables);
  assert.equal(
    await countOf('SELECT COUNT(*) AS n FROM daily_messages WHERE tenant_id = ?', [cast.tenantA]),
    1,
  );
  assert.equal(
    await countOf("SELECT COUNT(*) AS n FROM audit_logs WHERE tenant_id = ? AND action = 'RECENT'", [
      cast.tenantA,
    ]),
    2,
  );
  assert.equal(
    await countOf("SELECT COUNT(*) AS n FROM audit_logs WHERE tenant_id = ? AND action = 'OLD_EVENT'", [
      cast.tenantA,
    ]),
    0,
  );
  assert.equal(await countOf('SELECT COUNT(*) AS n FROM daily_usage WHERE tenant_id = ?', [cast.tenantA]), 1);
  assert.equal(await countOf('SELECT COUNT(*) AS n FROM quota_usage WHERE user_id = ?', [userA]), 1);
  assert.equal(
    await countOf('SELECT COUNT(*) AS n FROM daily_messages WHERE tenant_id = ?', [cast.tenantB]),
    3,
  );
  assert.equal(
    await countOf("SELECT COUNT(*) AS n FROM audit_logs WHERE tenant_id = ? AND action = 'OLD_EVENT'", [
      cast.tenantB,
    ]),
    2,
  );

  const again = await api(app.url, 'POST', `${url}?dry_run=true`, { auth: adminA });
  assert.equal(again.body.total, 0);

  // The platform admin runs every tenant; B's rows are within its retention.
  const all = await api(app.url, 'POST', `${url}?dry_run=false`, { auth: platform });
  assert.equal(all.status, 200);
  assert.ok(all.body.tenants.length >= 2);
  assert.equal(all.body.total, 0);

  const logs = await auditRepository(app.database).list(
    { kind: 'all' },
    { action: 'COMPLIANCE_RETENTION_CLEANUP' },
    { limit: 10, offset: 0 },
  );
  assert.equal(logs.length, 4);
  const realLog = logs.find((l) => l.details?.includes('"dry_run":false') && l.tenantId === cast.tenantA);
  assert.ok(realLog?.details?.includes('"total":12'), JSON.stringify(logs.map((l) => l.details)));
});

test('cleanup: validation, tenant targeting and admin-only access', async () => {
  const url = '/api/compliance/retention/cleanup';
  const bad = await api(app.url, 'POST', `${url}?dry_run=yes`, { auth: adminA });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /dry_run/);
  assert.equal(
    (await api(app.url, 'POST', `${url}?dry_run=true&tenant_id=${cast.tenantB}`, { auth: adminA })).status,
    403,
  );
  const b = await api(app.url, 'POST', `${url}?dry_run=true&tenant_id=${cast.tenantB}`, { auth: platform });
  assert.deepEqual(
    b.body.tenants.map((t: { tenant_id: number }) => t.tenant_id),
    [cast.tenantB],
  );
  assert.equal((await api(app.url, 'POST', url, { auth: cast.actors.manager.session })).status, 403);
  assert.equal((await api(app.url, 'POST', url)).status, 401);
});

test('cleanup deletes in batches: a batch smaller than the rows still removes all of them', async () => {
  await api(app.url, 'PUT', rulesUrl, {
    auth: platform,
    body: { tenant_id: cast.tenantB, data_retention_days: 30 },
  });
  await messages(cast.tenantB, daysAgo(45), 4, 'b-batch');
  const repo = retentionRepository(app.database);
  const cut = { auditBefore: new Date(Date.now() - 90 * DAY), dataBefore: daysAgo(30) };
  const counted = await repo.sweepTenant(cast.tenantB, cut, false);
  assert.equal(counted.daily_messages, 7);
  const deleted = await repo.sweepTenant(cast.tenantB, cut, true, 2);
  assert.deepEqual(deleted, counted);
  assert.equal(
    await countOf('SELECT COUNT(*) AS n FROM daily_messages WHERE tenant_id = ?', [cast.tenantB]),
    0,
  );
});
