// ROI and optimization endpoints on the real API and database: usage seeded through the upload API
// (analytics/seed.ts, whose messages have no model and are priced at the default price, plus one
// claude-opus message of alice's), exact figures for tenant A, defaults and validation (400 naming the
// parameter), the estimate label (rule 4), tenant scope (rule 5) and the own-figures rule of plain users.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, type Session } from '../support/session.ts';
import { type Seeded, seedAnalytics } from './analytics/seed.ts';

let app: TestApp;
let s: Seeded;
let adminA: Session;
let adminB: Session;
let userA: Session;
const get = (who: Session | undefined, path: string) => api(app.url, 'GET', path, who ? { auth: who } : {});
const ok = async (who: Session, path: string) => {
  const r = await get(who, path);
  assert.equal(r.status, 200, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const ENDPOINTS = [
  '/api/roi',
  '/api/roi/trend',
  '/api/roi/by-tool',
  '/api/roi/by-user',
  '/api/roi/summary',
  '/api/roi/cost-breakdown',
  '/api/roi/daily-costs',
  '/api/optimization/suggestions',
  '/api/optimization/cost-trend',
  '/api/optimization/efficiency',
];

before(async () => {
  app = await startTestApp();
  s = await seedAnalytics(app);
  adminA = s.cast.actors.tenant_admin.session!;
  adminB = s.cast.actors.other_tenant_admin.session!;
  userA = s.cast.actors.user.session!;
  const r = await api(app.url, 'POST', '/api/upload/batch', {
    headers: { 'x-upload-auth': 'test-upload-key' },
    body: {
      messages: [
        {
          message_id: randomUUID(),
          date: '2026-03-30',
          tool_name: 'tool-a',
          host_name: 'host-1',
          sender_name: s.alice.username,
          role: 'assistant',
          content: 'answer',
          model: 'claude-opus-4-1-20250805',
          input_tokens: 1_000_000,
          output_tokens: 100_000,
          timestamp: '2026-03-30T09:00:00Z',
        },
      ],
    },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
});
after(async () => {
  await app?.close();
});

test('every endpoint is labelled an estimate, defaults to the last 30 days, and needs a session', async () => {
  for (const path of ENDPOINTS) {
    const b = await ok(adminA, path);
    assert.equal(b.estimate, true, path);
    assert.match(b.note, /planning estimates/i, path);
    assert.deepEqual(b.period, { start_date: '2026-03-02', end_date: '2026-03-31' }, path);
    assert.equal(b.cost_currency, 'USD');
    assert.equal((await get(undefined, path)).status, 401, path);
  }
});

test('tenant A figures are exact under the default and given assumptions', async () => {
  const d = await ok(adminA, '/api/roi');
  assert.deepEqual(d.assumptions, {
    hourly_labor_cost: 50,
    productivity_multiplier: 1,
    avg_time_saved_per_request: 5,
    currency: 'USD',
  });
  assert.deepEqual(d.totals, {
    requests: 14,
    tokens: 1_158_000,
    input_tokens: 1_034_700,
    output_tokens: 123_300,
    cost: 22.9536,
    hours_saved: 1.17,
    hours_saved_source: 'assumed',
    hours_saved_measured: 0,
    hours_saved_assumed: 1.17,
    labor_value: 58.33,
    net_benefit: 35.38,
    roi_percent: 154.14,
  });
  const c = await ok(
    adminA,
    '/api/roi/summary?hourly_labor_cost=80&productivity_multiplier=0.5&avg_time_saved_per_request=12&currency=EUR',
  );
  assert.deepEqual(c.assumptions, {
    hourly_labor_cost: 80,
    productivity_multiplier: 0.5,
    avg_time_saved_per_request: 12,
    currency: 'EUR',
  });
  assert.equal(c.currency, 'EUR');
  assert.equal(c.totals.labor_value, 112, '14 x 12 min = 2.8 h x 80 x 0.5');
  assert.equal(c.totals.cost, 22.9536, 'the currency label converts nothing');
  assert.equal(c.pricing.default_priced_tokens, 58_000);

  const b = await ok(adminA, '/api/roi/cost-breakdown');
  assert.deepEqual(
    b.by_model.map((m: any) => [m.model, m.priced_by, m.cost]),
    [
      ['claude-opus-4-1-20250805', 'model', 22.5],
      [null, 'default', 0.4536],
    ],
  );
  const users = await ok(adminA, '/api/roi/by-user');
  assert.deepEqual(
    users.items.map((u: any) => [u.username, u.requests]),
    [
      [s.alice.username, 9],
      [s.abe.username, 5],
    ],
  );
  const alice = await ok(adminA, `/api/roi?user_id=${s.alice.id}&end_date=2026-03-29`);
  assert.equal(alice.totals.requests, 8);
  const trend = await ok(adminA, '/api/optimization/cost-trend?start_date=2026-03-30&end_date=2026-03-31');
  assert.deepEqual(
    trend.daily.map((x: any) => x.date),
    ['2026-03-30', '2026-03-31'],
  );
  assert.equal(trend.daily[0].cost, 22.5018, 'opus 22.5 + abe 200 tokens at the default price');
  const sug = await ok(adminA, '/api/optimization/suggestions');
  assert.ok(sug.suggestions.some((x: any) => x.type === 'expensive_model_share'));
  const tools = await ok(adminA, '/api/roi/by-tool?tool_name=tool-b');
  assert.deepEqual(tools.items, []);
});

test('tenant scope: B sees only B, the platform admin all, a plain user only themselves', async () => {
  const b = await ok(adminB, '/api/roi/by-tool');
  assert.deepEqual(
    b.items.map((x: any) => x.tool_name),
    ['tool-b'],
  );
  const all = await ok(s.cast.admin, '/api/roi/by-tool');
  assert.ok(['tool-a', 'tool-b'].every((t) => all.items.some((x: any) => x.tool_name === t)));
  const own = await ok(userA, '/api/roi');
  assert.equal(own.own_figures_only, true);
  assert.equal(own.totals.requests, 0);
  const r = await get(userA, `/api/roi?user_id=${s.alice.id}`);
  assert.equal(r.status, 403);
  const ro = await get(s.cast.actors.readonly.session!, '/api/roi');
  assert.equal(ro.status, 403, 'readonly lacks view_analysis');
});

test('validation: 400 naming the parameter', async () => {
  const cases: [string, string][] = [
    ['hourly_labor_cost=0', 'hourly_labor_cost'],
    ['productivity_multiplier=-1', 'productivity_multiplier'],
    ['avg_time_saved_per_request=abc', 'avg_time_saved_per_request'],
    ['currency=123456789', 'currency'],
    ['currency=', 'currency'],
    ['start_date=2026-02-30', 'start_date'],
    ['start_date=2026-03-10&end_date=2026-03-01', 'end_date'],
    ['user_id=x', 'user_id'],
  ];
  for (const path of ['/api/roi', '/api/roi/trend', '/api/optimization/efficiency'])
    for (const [q, name] of cases) {
      const r = await get(adminA, `${path}?${q}`);
      assert.equal(r.status, 400, `${path}?${q}`);
      assert.ok(String(r.body.error).startsWith(`${name}:`), `${q}: ${r.body.error}`);
    }
});
