// The administrator analytics (/api/analytics/report, forecast, efficiency, export, and the deprecated
// /api/analysis/forecast) on the real API and database, with usage seeded through the upload API
// (seed.ts): figures, defaults and validation, the forecast's exact 400 body and tenant rules
// (tenant_admin own tenant, 403 without one; platform_admin and legacy admin all tenants), the alias'
// headers, refusal of non-administrators, and a formula-safe CSV export.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser, PASSWORD } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session } from '../../support/session.ts';
import { EVIL_SENDER, EVIL_TOOL, EXPECTED, type Seeded, seedAnalytics, TODAY } from './seed.ts';

let app: TestApp;
let s: Seeded;
let adminA: Session;
let platform: Session;
let adminNoTenant: Session;

const get = (who: Session | undefined, path: string) => api(app.url, 'GET', path, who ? { auth: who } : {});
const ok = async (who: Session, path: string) => {
  const r = await get(who, path);
  assert.equal(r.status, 200, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const ADMIN_PATHS = [
  '/api/analytics/report',
  '/api/analytics/forecast',
  '/api/analysis/forecast',
  '/api/analytics/efficiency',
  '/api/analytics/export',
];

before(async () => {
  app = await startTestApp();
  s = await seedAnalytics(app);
  adminA = s.cast.actors.tenant_admin.session!;
  platform = s.cast.admin;
  // A tenant admin whose tenant was removed after login (without a tenant it cannot log in at all).
  const u = await createUser(app, platform, { role: 'tenant_admin', tenant_id: s.cast.tenantA });
  adminNoTenant = await login(app.url, u.username, PASSWORD);
  await app.database.sql.query('UPDATE users SET tenant_id = NULL WHERE id = ?', [u.id]);
});
after(async () => {
  await app?.close();
});

describe('access', () => {
  test('401 anonymous; 403 for user, readonly and manager on every admin endpoint', async () => {
    for (const path of ADMIN_PATHS) {
      assert.equal((await get(undefined, path)).status, 401, path);
      for (const who of ['user', 'readonly', 'manager'] as const) {
        const r = await get(s.cast.actors[who].session, path);
        assert.equal(r.status, 403, `${who} ${path}`);
        assert.deepEqual(r.body, { error: 'Admin access required' });
      }
    }
  });
});

describe('report', () => {
  test('defaults: 30 days ending today, trends and anomalies on; tenant admin sees its tenant', async () => {
    const r = await ok(adminA, '/api/analytics/report');
    assert.deepEqual(r.period, { start: '2026-03-02', end: TODAY, days: 30 });
    assert.deepEqual(r.scope, { tenant_id: s.cast.tenantA });
    assert.equal(r.summary.tokens, EXPECTED.tenantA.tokens);
    assert.equal(r.summary.requests, EXPECTED.tenantA.requests);
    assert.equal(r.summary.messages, EXPECTED.tenantA.messages);
    assert.deepEqual(
      r.by_tool.map((t: any) => t.tool_name),
      ['tool-a'],
    );
    assert.deepEqual(
      r.top_users.map((u: any) => u.username),
      [s.alice.username, s.abe.username],
    );
    assert.equal(r.trends.daily.length, 30);
    assert.equal(r.trends.direction, 'up');
    assert.equal(r.trends.second_half_tokens, 58_000);
    assert.equal(r.trends.first_half_tokens, 0);
    assert.equal(r.anomalies.count, 1);
    assert.equal(r.anomalies.items[0].username, s.alice.username);
  });

  test('end_date, days, trends=false, anomalies=false; validation', async () => {
    const r = await ok(
      adminA,
      '/api/analytics/report?end_date=2026-03-26&days=7&trends=false&anomalies=false',
    );
    assert.deepEqual(r.period, { start: '2026-03-20', end: '2026-03-26', days: 7 });
    assert.equal(r.summary.tokens, 7000);
    assert.ok(!('trends' in r));
    assert.ok(!('anomalies' in r));
    for (const [q, param] of [
      ['end_date=2026-3-1', 'end_date'],
      ['days=0', 'days'],
      ['days=abc', 'days'],
      ['trends=maybe', 'trends'],
      ['anomalies=2', 'anomalies'],
    ]) {
      const b = await get(adminA, `/api/analytics/report?${q}`);
      assert.equal(b.status, 400, q);
      assert.match(b.body.error, new RegExp(`^${param}: `));
    }
  });

  test('platform admin and legacy admin see every tenant', async () => {
    assert.equal((await ok(platform, '/api/analytics/report')).summary.tokens, EXPECTED.all.tokens);
    assert.equal(
      (await ok(s.cast.actors.legacy_admin.session!, '/api/analytics/report')).summary.tokens,
      EXPECTED.all.tokens,
    );
    assert.equal(
      (await ok(s.cast.actors.other_tenant_admin.session!, '/api/analytics/report')).summary.tokens,
      EXPECTED.tenantB.tokens,
    );
  });
});

describe('forecast', () => {
  const historySum = (b: any) => b.history.daily.reduce((a: number, d: any) => a + d.tokens, 0);

  test('default 7 days of Holt points with a 95 % interval, from today', async () => {
    const f = await ok(adminA, '/api/analytics/forecast');
    assert.equal(f.method, 'holt_linear');
    assert.equal(f.interval.level, 0.95);
    assert.equal(f.days, 7);
    assert.equal(f.forecast.length, 7);
    assert.equal(f.forecast[0].date, TODAY);
    assert.equal(f.forecast[6].date, '2026-04-06');
    for (const p of f.forecast) {
      assert.ok(Number.isInteger(p.tokens) && Number.isInteger(p.lower) && Number.isInteger(p.upper));
      assert.ok(p.lower <= p.tokens && p.tokens <= p.upper && p.lower >= 0, JSON.stringify(p));
    }
    assert.equal(
      f.total_forecast_tokens,
      f.forecast.reduce((a: number, p: any) => a + p.tokens, 0),
    );
    assert.ok(
      f.parameters.alpha > 0 && f.parameters.alpha < 1 && f.parameters.beta > 0 && f.parameters.beta < 1,
    );
    assert.deepEqual(
      [f.history.start, f.history.end, f.history.daily.length],
      ['2026-02-03', '2026-03-30', 56],
    );
    assert.equal((await ok(adminA, '/api/analytics/forecast?days=90')).forecast.length, 90);
    assert.equal((await ok(adminA, '/api/analytics/forecast?days=1')).forecast.length, 1);
  });

  test('tenant_admin forecasts its own tenant; platform_admin and legacy admin all tenants', async () => {
    const own = await ok(adminA, '/api/analytics/forecast');
    assert.deepEqual(own.scope, { all_tenants: false, tenant_id: s.cast.tenantA });
    // history ends yesterday: tenant A less abe's 200 tokens of today
    assert.equal(historySum(own), EXPECTED.tenantA.tokens - 200);
    const b = await ok(s.cast.actors.other_tenant_admin.session!, '/api/analytics/forecast');
    assert.equal(historySum(b), EXPECTED.tenantB.tokens);
    for (const who of [platform, s.cast.actors.legacy_admin.session!]) {
      const all = await ok(who, '/api/analytics/forecast');
      assert.deepEqual(all.scope, { all_tenants: true, tenant_id: null });
      assert.equal(historySum(all), EXPECTED.all.tokens - 200);
    }
  });

  test('a tenant admin without a tenant gets 403', async () => {
    const r = await get(adminNoTenant, '/api/analytics/forecast');
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, { error: 'Tenant admin must have tenant_id' });
  });

  for (const bad of ['0', '91', 'abc', '1.5'])
    test(`days=${bad} is a 400 with the spec body`, async () => {
      for (const path of ['/api/analytics/forecast', '/api/analysis/forecast']) {
        const r = await get(adminA, `${path}?days=${bad}`);
        assert.equal(r.status, 400);
        assert.deepEqual(r.body, {
          error: 'invalid_parameter',
          message: 'days must be an integer from 1 to 90',
          parameter: 'days',
          received: bad,
          valid_range: '1-90',
        });
      }
    });

  test('the deprecated alias answers the same with Deprecation and Link headers', async () => {
    const main = await get(platform, '/api/analytics/forecast?days=5');
    const alias = await get(platform, '/api/analysis/forecast?days=5');
    assert.equal(alias.status, 200);
    assert.deepEqual(alias.body, main.body);
    assert.equal(alias.res.headers.get('deprecation'), 'true');
    assert.equal(alias.res.headers.get('link'), '</api/analytics/forecast>; rel="successor-version"');
    assert.equal(main.res.headers.get('deprecation'), null);
    const refused = await get(s.cast.actors.user.session, '/api/analysis/forecast');
    assert.equal(refused.status, 403);
    assert.equal(refused.res.headers.get('deprecation'), 'true');
  });
});

describe('efficiency', () => {
  test('overall, per tool and per user ratios of the tenant', async () => {
    const e = await ok(adminA, '/api/analytics/efficiency');
    assert.deepEqual([e.start, e.end], ['2026-03-02', TODAY]);
    assert.equal(e.overall.tokens, 58_000);
    assert.equal(e.overall.requests, 13);
    assert.equal(e.overall.tokens_per_request, 4461.54);
    assert.equal(e.overall.tokens_per_message, 2761.9);
    assert.equal(e.overall.output_input_ratio, 0.67);
    assert.deepEqual(
      e.by_tool.map((t: any) => [t.tool_name, t.tokens_per_request]),
      [['tool-a', 4461.54]],
    );
    assert.deepEqual(
      e.by_user.map((u: any) => [u.username, u.tokens_per_request, u.tokens_per_active_day]),
      [
        [s.alice.username, 7125, 7125],
        [s.abe.username, 200, 200],
      ],
    );
  });
});

describe('export', () => {
  test('JSON by default: rows of the tenant by day, tool, host and sender; audited', async () => {
    const r = await get(adminA, '/api/analytics/export');
    assert.equal(r.status, 200);
    assert.match(r.res.headers.get('content-disposition') ?? '', /analytics-2026-03-31\.json/);
    assert.equal(r.body.days, 30);
    assert.equal(r.body.count, 13);
    assert.ok(r.body.rows.every((x: any) => x.tool_name === 'tool-a' && x.tenant_id === s.cast.tenantA));
    assert.equal(
      r.body.rows.reduce((a: number, x: any) => a + x.tokens, 0),
      EXPECTED.tenantA.tokens,
    );
    const spike = r.body.rows.find((x: any) => x.date === '2026-03-27' && x.sender_name === s.alice.username);
    assert.deepEqual(spike, {
      date: '2026-03-27',
      tool_name: 'tool-a',
      host_name: 'host-1',
      sender_name: s.alice.username,
      tenant_id: s.cast.tenantA,
      tokens: 50_000,
      input_tokens: 30_000,
      output_tokens: 20_000,
      messages: 2,
      requests: 1,
    });
    assert.equal((await ok(adminA, '/api/analytics/export?days=3')).count, 3);
    const audit = await app.database.sql.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'ANALYTICS_EXPORT'",
    );
    assert.ok(Number(audit[0]!.n) >= 2);
  });

  test('CSV is formula-safe: a sender or tool starting with = is neutralised', async () => {
    const r = await get(platform, '/api/analytics/export?format=csv');
    assert.equal(r.status, 200);
    assert.match(r.res.headers.get('content-type') ?? '', /^text\/csv/);
    const lines = String(r.body).trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'date,tool_name,host_name,sender_name,tenant_id,tokens,input_tokens,output_tokens,messages,requests',
    );
    assert.equal(lines.length, 1 + 13 + 6 + 1);
    const evil = lines.find((l) => l.includes('host-9'));
    assert.equal(evil, `2026-03-30,'${EVIL_TOOL},host-9,"'=HYPERLINK(""http://x"")",1,10,5,5,1,1`);
    assert.ok(EVIL_SENDER.startsWith('='));
    for (const line of lines) assert.ok(!/(^|,)"?[=+\-@]/.test(line), line);
  });

  test('validation and permission', async () => {
    for (const [q, param] of [
      ['format=xml', 'format'],
      ['days=0', 'days'],
      ['days=367', 'days'],
    ]) {
      const b = await get(adminA, `/api/analytics/export?${q}`);
      assert.equal(b.status, 400, q);
      assert.match(b.body.error, new RegExp(`^${param}: `));
    }
  });
});
