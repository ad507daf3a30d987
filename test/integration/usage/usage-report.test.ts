// GET /api/usage/report on the real API and database: messages and usage reports uploaded through the
// upload API on a fixed "today" (2026-03-31), then every grouping's rows equal figures computed here
// from those rows and the built-in prices (domain/roi/prices.ts), the rows add up to the totals
// whatever the grouping, a usage report that messages already cover counts nothing (README "Reading
// usage"), the report agrees with /api/roi/by-user, and the refusals: 400 naming the parameter, 401,
// 403 for readonly, for another user's figures and for grouping by tenant outside the system admin.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { buildCast, type Cast, createUser, PASSWORD, uniqueName } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { UPLOAD_KEY } from '../../support/quota.ts';
import { api, login, type Session } from '../../support/session.ts';

let app: TestApp;
let cast: Cast;
let alice: { id: number; username: string };
let abe: { id: number; username: string };
let aliceSession: Session;
const get = (who: Session | undefined, path: string) => api(app.url, 'GET', path, who ? { auth: who } : {});
const ok = async (who: Session, path: string) => {
  const r = await get(who, path);
  assert.equal(r.status, 200, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const figures = (r: any) => [r.key, r.input_tokens, r.output_tokens, r.tokens, r.requests, r.cost];

function message(date: string, tool: string, host: string, sender: string, extra: Record<string, unknown>) {
  return {
    message_id: randomUUID(),
    date,
    tool_name: tool,
    host_name: host,
    sender_name: sender,
    role: 'assistant',
    content: 'answer',
    timestamp: `${date}T10:00:00Z`,
    ...extra,
  };
}

before(async () => {
  app = await startTestApp();
  app.clock.offsetMs = Date.parse('2026-03-31T12:00:00Z') - Date.now();
  cast = await buildCast(app);
  const mk = (tenant: number) => createUser(app, cast.admin, { role: 'user', tenant_id: tenant });
  const a = await mk(cast.tenantA);
  alice = { id: a.id, username: a.username };
  const b = await mk(cast.tenantA);
  abe = { id: b.id, username: b.username };
  const bea = await mk(cast.tenantB);
  aliceSession = await login(app.url, alice.username, PASSWORD);
  const unknown = uniqueName('nobody');
  const messages = [
    // alice: Sonnet 4.5 at $3/$15 -> $6; GPT-4o at $2.50/$10 -> $2; her question is not a request.
    message('2026-03-24', 'tool-x', 'host-1', alice.username, { role: 'user', content: 'question' }),
    message('2026-03-24', 'tool-x', 'host-1', alice.username, {
      model: 'claude-sonnet-4-5-20250929',
      input_tokens: 1_000_000,
      output_tokens: 200_000,
    }),
    message('2026-03-25', 'tool-y', 'host-1', alice.username, {
      model: 'gpt-4o',
      input_tokens: 400_000,
      output_tokens: 100_000,
    }),
    // abe: two answers without a model, default price $3/$15 -> $0.45.
    ...[0, 1].map(() =>
      message('2026-03-25', 'tool-x', 'host-1', abe.username, { input_tokens: 50_000, output_tokens: 5_000 }),
    ),
    // bea, tenant B: $0.225.
    message('2026-03-26', 'tool-x', 'host-2', bea.username, {
      model: 'claude-sonnet-4',
      input_tokens: 50_000,
      output_tokens: 5_000,
    }),
    // An unknown sender lands in tenant 1: $0.035.
    message('2026-03-27', 'tool-z', 'host-9', unknown, {
      model: 'gpt-4o',
      input_tokens: 10_000,
      output_tokens: 1_000,
    }),
  ];
  const r = await api(app.url, 'POST', '/api/upload/batch', { headers: UPLOAD_KEY, body: { messages } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // A usage report of a day, tool and host that has messages counts nothing; one without messages
  // counts once, priced at its single model (2,000 in + 1,000 out of GPT-4o: $0.015).
  for (const report of [
    { date: '2026-03-27', tool_name: 'tool-z', host_name: 'host-9', tokens_used: 999_999, request_count: 9 },
    {
      date: '2026-03-28',
      tool_name: 'tool-z',
      host_name: 'host-9',
      tokens_used: 3000,
      input_tokens: 2000,
      output_tokens: 1000,
      request_count: 4,
      models_used: 'gpt-4o',
    },
  ]) {
    const u = await api(app.url, 'POST', '/api/upload/usage', { headers: UPLOAD_KEY, body: report });
    assert.equal(u.status, 200, JSON.stringify(u.body));
  }
});
after(async () => {
  await app?.close();
});

const ALICE = [1_400_000, 300_000, 1_700_000, 2, 8];
const ABE = [100_000, 10_000, 110_000, 2, 0.45];

test('tenant A by user, tool and model: exact figures, most tokens first, rows add up to the totals', async () => {
  for (const who of [cast.actors.tenant_admin.session!, cast.actors.manager.session!]) {
    const u = await ok(who, '/api/usage/report?group_by=user');
    assert.equal(u.group_by, 'user');
    assert.deepEqual(u.period, { start_date: '2026-03-02', end_date: '2026-03-31' });
    assert.equal(u.estimate, true);
    assert.equal(u.own_figures_only, false);
    assert.deepEqual(u.rows.map(figures), [
      [alice.id, ...ALICE],
      [abe.id, ...ABE],
    ]);
    assert.deepEqual(
      u.rows.map((r: any) => r.label),
      [alice.username, abe.username],
    );
    assert.deepEqual(u.totals, {
      input_tokens: 1_500_000,
      output_tokens: 310_000,
      tokens: 1_810_000,
      requests: 4,
      cost: 8.45,
    });
  }
  const admin = cast.actors.tenant_admin.session!;
  const tools = await ok(admin, '/api/usage/report?group_by=tool');
  assert.deepEqual(tools.rows.map(figures), [
    ['tool-x', 1_100_000, 210_000, 1_310_000, 3, 6.45],
    ['tool-y', 400_000, 100_000, 500_000, 1, 2],
  ]);
  const models = await ok(admin, '/api/usage/report?group_by=model');
  assert.deepEqual(models.rows.map(figures), [
    ['claude-sonnet-4-5-20250929', 1_000_000, 200_000, 1_200_000, 1, 6],
    ['gpt-4o', 400_000, 100_000, 500_000, 1, 2],
    [null, 100_000, 10_000, 110_000, 2, 0.45],
  ]);
  assert.equal(models.rows[2].label, '(no model)');
  for (const g of [tools, models]) assert.deepEqual(g.totals, tools.totals);

  // A one-day range.
  const day = await ok(admin, '/api/usage/report?group_by=user&start_date=2026-03-25&end_date=2026-03-25');
  assert.deepEqual(day.rows.map(figures), [
    [alice.id, 400_000, 100_000, 500_000, 1, 2],
    [abe.id, ...ABE],
  ]);

  // The same figures as the ROI endpoint.
  const roi = await ok(admin, '/api/roi/by-user');
  assert.deepEqual(
    roi.items.map((i: any) => [i.user_id, i.tokens, i.requests, i.cost]),
    [
      [alice.id, 1_700_000, 2, 8],
      [abe.id, 110_000, 2, 0.45],
    ],
  );
});

test('the system administrator by tenant and by user: a covered usage report counts nothing', async () => {
  const admin = cast.admin;
  const t = await ok(admin, '/api/usage/report?group_by=tenant');
  const names = await app.database.sql.query<{ id: number; name: string }>(
    'SELECT id, name FROM tenants WHERE id IN (?, ?, 1)',
    [cast.tenantA, cast.tenantB],
  );
  const nameOf = (id: number) => names.find((x) => Number(x.id) === id)!.name;
  assert.deepEqual(t.rows.map(figures), [
    [cast.tenantA, 1_500_000, 310_000, 1_810_000, 4, 8.45],
    [cast.tenantB, 50_000, 5_000, 55_000, 1, 0.225],
    // 11,000 from the message and 3,000 from the report of the 28th; the 999,999 of the 27th are
    // covered by that day's message and add nothing.
    [1, 12_000, 2_000, 14_000, 1, 0.05],
  ]);
  assert.deepEqual(
    t.rows.map((r: any) => r.label),
    [nameOf(cast.tenantA), nameOf(cast.tenantB), nameOf(1)],
  );
  assert.deepEqual(t.totals, {
    input_tokens: 1_562_000,
    output_tokens: 317_000,
    tokens: 1_879_000,
    requests: 6,
    cost: 8.725,
  });
  const u = await ok(admin, '/api/usage/report?group_by=user');
  const last = u.rows.at(-1);
  assert.deepEqual(figures(last), [null, 12_000, 2_000, 14_000, 1, 0.05]);
  assert.equal(last.label, 'Unattributed (no known user)');
  for (const by of ['user', 'tool', 'model']) {
    const g = await ok(admin, `/api/usage/report?group_by=${by}`);
    assert.deepEqual(g.totals, t.totals, by);
    const sum = (k: string) => g.rows.reduce((s: number, r: any) => s + r[k], 0);
    for (const k of ['input_tokens', 'output_tokens', 'tokens', 'requests'])
      assert.equal(sum(k), t.totals[k], `${by} ${k}`);
  }
});

test('a plain user sees only their own figures; another user_id is a 403', async () => {
  const own = await ok(aliceSession, '/api/usage/report?group_by=tool');
  assert.equal(own.own_figures_only, true);
  assert.deepEqual(own.rows.map(figures), [
    ['tool-x', 1_000_000, 200_000, 1_200_000, 1, 6],
    ['tool-y', 400_000, 100_000, 500_000, 1, 2],
  ]);
  const other = await get(aliceSession, `/api/usage/report?user_id=${abe.id}`);
  assert.equal(other.status, 403);
});

test('refusals: 400 naming the parameter, 401 without a session, 403 by role and for tenant grouping', async () => {
  const admin = cast.actors.tenant_admin.session!;
  for (const [query, param] of [
    ['group_by=host', 'group_by'],
    ['start_date=2026-13-01', 'start_date'],
    ['end_date=31.03.2026', 'end_date'],
    ['start_date=2026-03-10&end_date=2026-03-01', 'end_date'],
    ['user_id=abc', 'user_id'],
  ]) {
    const r = await get(admin, `/api/usage/report?${query}`);
    assert.equal(r.status, 400, query);
    assert.match(r.body.error, new RegExp(`^${param}: `), query);
  }
  assert.equal((await get(undefined, '/api/usage/report')).status, 401);
  const ro = await get(cast.actors.readonly.session!, '/api/usage/report');
  assert.equal(ro.status, 403);
  for (const who of [admin, cast.actors.manager.session!, aliceSession]) {
    const r = await get(who, '/api/usage/report?group_by=tenant');
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'Grouping by tenant is for system administrators');
  }
});
