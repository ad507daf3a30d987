// /api/tenants*: creation with spec-default settings and quotas, plans, lookups by id and slug,
// updates, suspend/activate, soft and hard delete, usage, stats and the quota check.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createUser, uniqueName } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let admin: Session;

before(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
});
after(() => app?.close());

const create = (body: unknown) => api(app.url, 'POST', '/api/tenants', { auth: admin, body });

test('create: settings and quota rows with the spec defaults; slug unique; plan defaults to standard', async () => {
  const r = await create({
    name: 'Acme Corp',
    slug: `acme-${Date.now()}`,
    contact_email: 'ops@acme.test',
    contact_name: 'Ops',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const t = r.body.tenant;
  assert.equal(t.plan, 'standard');
  assert.equal(t.status, 'active');
  assert.deepEqual(t.settings, {
    content_filter_enabled: true,
    audit_log_enabled: true,
    audit_log_retention_days: 90,
    data_retention_days: 365,
    sso_enabled: false,
  });
  assert.deepEqual(t.quota, {
    daily_token_limit: 1_000_000,
    monthly_token_limit: 30_000_000,
    daily_request_limit: 10_000,
    monthly_request_limit: 300_000,
    max_users: 100,
    max_sessions_per_user: 5,
  });
  const rows = await app.database.sql.query('SELECT * FROM tenant_quotas WHERE tenant_id = ?', [t.id]);
  assert.equal(rows.length, 1, 'the quota row exists in the database');
  assert.equal(
    (await app.database.sql.query('SELECT * FROM tenant_settings WHERE tenant_id = ?', [t.id])).length,
    1,
  );

  const dup = await create({ name: 'Other', slug: t.slug });
  assert.deepEqual([dup.status, dup.body], [400, { error: 'Tenant slug already exists' }]);
  const derived = await create({ name: `Ünïcode Name ${Date.now()}` });
  assert.match(derived.body.tenant.slug, /^unicode-name-\d+$/);
  assert.equal((await create({ name: 'x', plan: 'platinum' })).status, 400);
  assert.equal((await create({ slug: 'no-name' })).status, 400);

  const trial = await create({ name: uniqueName('Trial'), plan: 'free', trial_days: 14 });
  assert.equal(trial.body.tenant.status, 'trial');
  assert.equal(
    Date.parse(trial.body.tenant.trial_ends_at) - Date.parse(trial.body.tenant.created_at),
    14 * 86_400_000,
  );
});

test('plans, list, get by id and slug, update', async () => {
  const plans = await api(app.url, 'GET', '/api/tenants/plans', { auth: admin });
  assert.deepEqual(
    plans.body.plans.map((p: any) => p.id),
    ['free', 'standard', 'premium', 'enterprise'],
  );
  const t = (await create({ name: uniqueName('Look') })).body.tenant;
  const list = await api(app.url, 'GET', '/api/tenants', { auth: admin });
  assert.ok(list.body.tenants.some((x: any) => x.id === t.id));
  assert.equal((await api(app.url, 'GET', `/api/tenants/${t.id}`, { auth: admin })).body.tenant.slug, t.slug);
  assert.equal(
    (await api(app.url, 'GET', `/api/tenants/slug/${t.slug}`, { auth: admin })).body.tenant.id,
    t.id,
  );
  assert.equal((await api(app.url, 'GET', '/api/tenants/987654', { auth: admin })).status, 404);
  assert.equal((await api(app.url, 'GET', '/api/tenants/slug/nope-nope', { auth: admin })).status, 404);
  const up = await api(app.url, 'PUT', `/api/tenants/${t.id}`, {
    auth: admin,
    body: { name: 'Renamed', plan: 'enterprise' },
  });
  assert.equal(up.status, 200);
  assert.deepEqual([up.body.tenant.name, up.body.tenant.plan], ['Renamed', 'enterprise']);
  const settings = await api(app.url, 'PUT', `/api/tenants/${t.id}/settings`, {
    auth: admin,
    body: { sso_enabled: true, audit_log_retention_days: 30 },
  });
  assert.deepEqual(
    [settings.body.settings.sso_enabled, settings.body.settings.audit_log_retention_days],
    [true, 30],
  );
  const quota = await api(app.url, 'PUT', `/api/tenants/${t.id}/quota`, {
    auth: admin,
    body: { daily_token_limit: 5 },
  });
  assert.equal(quota.body.quota.daily_token_limit, 5);
  assert.equal(
    (
      await api(app.url, 'PUT', `/api/tenants/${t.id}/quota`, {
        auth: admin,
        body: { daily_token_limit: -5 },
      })
    ).status,
    400,
  );
});

test('a tenant admin reads its own tenant only', async () => {
  const mine = (await create({ name: uniqueName('Mine') })).body.tenant;
  const theirs = (await create({ name: uniqueName('Theirs') })).body.tenant;
  const ta = await createUser(app, admin, { role: 'tenant_admin', tenant_id: mine.id });
  const s = await login(app.url, ta.username, ta.password);
  assert.equal((await api(app.url, 'GET', `/api/tenants/${mine.id}`, { auth: s })).status, 200);
  assert.equal((await api(app.url, 'GET', `/api/tenants/slug/${mine.slug}`, { auth: s })).status, 200);
  for (const path of [
    `/api/tenants/${theirs.id}`,
    `/api/tenants/slug/${theirs.slug}`,
    '/api/tenants/987654',
    '/api/tenants/slug/none-such',
    `/api/tenants/${theirs.id}/usage`,
  ])
    assert.equal((await api(app.url, 'GET', path, { auth: s })).status, 403, path);
});

test('suspend and activate; soft delete hides, hard delete removes; the default tenant stays', async () => {
  const t = (await create({ name: uniqueName('Life') })).body.tenant;
  const u = await createUser(app, admin, { role: 'user', tenant_id: t.id });
  assert.equal(
    (await api(app.url, 'POST', `/api/tenants/${t.id}/suspend`, { auth: admin })).body.tenant.status,
    'suspended',
  );
  const refused = await api(app.url, 'POST', '/api/auth/login', {
    body: { username: u.username, password: u.password },
  });
  assert.equal(refused.status, 403);
  assert.match(refused.body.error, /suspended/);
  assert.equal(
    (await api(app.url, 'POST', `/api/tenants/${t.id}/activate`, { auth: admin })).body.tenant.status,
    'active',
  );
  await login(app.url, u.username, u.password);

  assert.equal((await api(app.url, 'DELETE', `/api/tenants/${t.id}`, { auth: admin })).status, 200);
  assert.equal((await api(app.url, 'GET', `/api/tenants/${t.id}`, { auth: admin })).status, 404);
  assert.ok(
    !(await api(app.url, 'GET', '/api/tenants', { auth: admin })).body.tenants.some(
      (x: any) => x.id === t.id,
    ),
  );
  assert.ok(
    (await api(app.url, 'GET', '/api/tenants?include_deleted=true', { auth: admin })).body.tenants.some(
      (x: any) => x.id === t.id && x.deleted_at,
    ),
  );
  assert.equal(
    (await api(app.url, 'POST', '/api/auth/login', { body: { username: u.username, password: u.password } }))
      .status,
    403,
    'users of a deleted tenant are refused',
  );

  assert.equal((await api(app.url, 'DELETE', `/api/tenants/${t.id}?hard=true`, { auth: admin })).status, 200);
  assert.equal((await app.database.sql.query('SELECT id FROM tenants WHERE id = ?', [t.id])).length, 0);
  assert.equal(
    (await app.database.sql.query('SELECT tenant_id FROM tenant_quotas WHERE tenant_id = ?', [t.id])).length,
    0,
  );
  const [orphan] = await app.database.sql.query<{ tenant_id: unknown }>(
    'SELECT tenant_id FROM users WHERE id = ?',
    [u.id],
  );
  assert.equal(orphan?.tenant_id, null, 'users keep living without the tenant (set null)');

  const def = await api(app.url, 'DELETE', '/api/tenants/1', { auth: admin });
  assert.equal(def.status, 400);
  const log = await api(app.url, 'GET', '/api/audit/logs?resource_type=tenant', { auth: admin });
  const actions = new Set(
    log.body.logs.filter((l: any) => l.target_tenant_id === t.id).map((l: any) => l.action),
  );
  for (const a of [
    'TENANT_CREATE',
    'TENANT_SUSPEND',
    'TENANT_ACTIVATE',
    'TENANT_DELETE',
    'TENANT_HARD_DELETE',
  ])
    assert.ok(actions.has(a), a);
});

test('usage, stats and check-quota read tenant_usage against the limits', async () => {
  const t = (await create({ name: uniqueName('Usage') })).body.tenant;
  const today = app.clock.now().toISOString().slice(0, 10);
  await app.database.sql.query(
    'INSERT INTO tenant_usage (tenant_id, date, tokens_used, requests_made, active_users) VALUES (?, ?, ?, ?, ?)',
    [t.id, today, 1_200_000, 10, 2],
  );
  const usage = await api(app.url, 'GET', `/api/tenants/${t.id}/usage?days=7`, { auth: admin });
  assert.deepEqual(usage.body.totals, { tokens_used: 1_200_000, requests_made: 10 });
  const check = await api(app.url, 'POST', `/api/tenants/${t.id}/check-quota`, { auth: admin });
  assert.equal(check.body.within_quota, false);
  assert.deepEqual(check.body.exceeded, ['daily_tokens']);
  const stats = await api(app.url, 'GET', `/api/tenants/${t.id}/stats`, { auth: admin });
  assert.equal(stats.body.today.tokens_used, 1_200_000);
  assert.equal(
    (await api(app.url, 'GET', `/api/tenants/${t.id}/usage?start_date=2026-13-45`, { auth: admin })).status,
    400,
  );
});
