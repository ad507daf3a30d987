// The idle-quota suggestion of GET /api/optimization/suggestions on the real API and database: users
// whose daily/monthly token quota is far above their use over the period (< 20 % used) get a
// suggestion with the figures behind it; a user just over the threshold, a user without a quota and a
// busy tenant get none; an idle tenant (default limits, no use) gets one, seen only in its own scope.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { daysOf } from '../../domain/analytics/days.ts';
import { buildCast, type Cast, createUser } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let cast: Cast;
const START = '2026-04-01';
const END = '2026-04-30';
const DAYS = daysOf(START, END);
const people: Record<'idle' | 'edge' | 'over' | 'free', { id: number; username: string; session?: Session }> =
  {} as never;

const suggestionsOf = async (who: Session, extra = '') => {
  const r = await api(
    app.url,
    'GET',
    `/api/optimization/suggestions?start_date=${START}&end_date=${END}${extra}`,
    {
      auth: who,
    },
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body.suggestions as any[]).filter((s) => s.type === 'idle_quota');
};
const forUser = (list: any[], id: number) =>
  list.find((s) => s.signal.subject === 'user' && s.signal.user_id === id);
const forTenant = (list: any[], id: number) =>
  list.find((s) => s.signal.subject === 'tenant' && s.signal.tenant_id === id);

async function upload(username: string, perDay: [string, number][]) {
  const r = await api(app.url, 'POST', '/api/upload/batch', {
    headers: { 'x-upload-auth': 'test-upload-key' },
    body: {
      messages: perDay.map(([date, tokens]) => ({
        message_id: randomUUID(),
        date,
        tool_name: 'tool-a',
        host_name: 'host-1',
        sender_name: username,
        role: 'assistant',
        content: 'answer',
        model: 'gpt-4o',
        input_tokens: tokens / 2,
        output_tokens: tokens / 2,
        timestamp: `${date}T09:00:00Z`,
      })),
    },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  for (const name of ['idle', 'edge', 'over', 'free'] as const) {
    const u = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
    people[name] = { ...u, session: await login(app.url, u.username, u.password) };
  }
  const quota = async (id: number, body: object) => {
    const r = await api(app.url, 'PUT', `/api/admin/users/${id}/quota`, { auth: cast.admin, body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  // idle: 10M/day and 100M/month (millions, rule 2); 1M tokens in the whole period.
  await quota(people.idle.id, { daily_token_quota: 10, monthly_token_quota: 100 });
  await upload(people.idle.username, [['2026-04-10', 1_000_000]]);
  // edge: 5M/day; 990,000 a day = 19.8 % -> a suggestion. over: 1,010,000 a day = 20.2 % -> none.
  await quota(people.edge.id, { daily_token_quota: 5 });
  await upload(
    people.edge.username,
    DAYS.map((d) => [d, 990_000]),
  );
  await quota(people.over.id, { daily_token_quota: 5 });
  await upload(
    people.over.username,
    DAYS.map((d) => [d, 1_010_000]),
  );
  // free: no quota at all, little use.
  await upload(people.free.username, [['2026-04-10', 1000]]);
});
after(async () => {
  await app?.close();
});

test('a user far below their quota gets a suggestion with the figures; threshold, no-quota and busy tenant miss', async () => {
  const list = await suggestionsOf(cast.actors.tenant_admin.session!);
  const idle = forUser(list, people.idle.id);
  assert.ok(idle, JSON.stringify(list));
  assert.equal(idle.severity, 'info');
  assert.equal(idle.signal.username, people.idle.username);
  assert.equal(idle.signal.period_days, 30);
  assert.equal(idle.signal.tokens_in_period, 1_000_000);
  assert.deepEqual(idle.signal.quotas, [
    {
      quota: 'daily_token_quota',
      unit: 'million tokens',
      current: 10,
      suggested: 2, // peak day 1M x 1.5, rounded up to whole millions
      used_percent: 0.33, // 1M / 30 days / 10M
      average_daily_tokens: 33_333.33,
      peak_daily_tokens: 1_000_000,
    },
    {
      quota: 'monthly_token_quota',
      unit: 'million tokens',
      current: 100,
      suggested: 2, // 30-day projection 1M x 1.5
      used_percent: 1,
      projected_monthly_tokens: 1_000_000,
      peak_daily_tokens: 1_000_000,
    },
  ]);
  assert.match(idle.detail, /daily_token_quota 10 million tokens: 0\.33 % used/);

  const edge = forUser(list, people.edge.id);
  assert.ok(edge, 'just below 20 % is a suggestion');
  assert.equal(edge.signal.quotas.length, 1);
  assert.equal(edge.signal.quotas[0].used_percent, 19.8);
  assert.equal(edge.signal.quotas[0].suggested, 2); // 990,000 x 1.5 -> 2M
  assert.equal(forUser(list, people.over.id), undefined, '20.2 % used is not idle');
  assert.equal(forUser(list, people.free.id), undefined, 'no quota, no suggestion');
  // Tenant A used ~61M tokens in 30 days against 1M/day and 30M/month: not idle. Tenant B is not in scope.
  assert.equal(forTenant(list, cast.tenantA), undefined);
  assert.equal(forTenant(list, cast.tenantB), undefined);
});

test('an idle tenant gets a suggestion in its own scope only; users see only their own', async () => {
  const b = await suggestionsOf(cast.actors.other_tenant_admin.session!);
  const tb = forTenant(b, cast.tenantB);
  assert.ok(tb, JSON.stringify(b));
  assert.deepEqual(
    tb.signal.quotas.map((q: any) => [q.quota, q.unit, q.current, q.suggested, q.used_percent]),
    [
      ['daily_token_limit', 'tokens', 1_000_000, 1000, 0],
      ['monthly_token_limit', 'tokens', 30_000_000, 1000, 0],
    ],
  );
  assert.equal(
    b.some((s) => s.signal.subject === 'user'),
    false,
    'tenant B admin sees no tenant A user',
  );

  const all = await suggestionsOf(cast.admin);
  assert.ok(forTenant(all, cast.tenantB));
  assert.ok(forUser(all, people.idle.id));

  const own = await suggestionsOf(people.idle.session!);
  assert.deepEqual(
    own.map((s) => [s.signal.subject, s.signal.user_id]),
    [['user', people.idle.id]],
  );
  assert.deepEqual(await suggestionsOf(people.over.session!), []);
  const other = await api(app.url, 'GET', `/api/optimization/suggestions?user_id=${people.idle.id}`, {
    auth: people.over.session!,
  });
  assert.equal(other.status, 403);
  // A user filter narrows an admin's view to that user (no tenant suggestion).
  const one = await suggestionsOf(cast.actors.tenant_admin.session!, `&user_id=${people.edge.id}`);
  assert.deepEqual(
    one.map((s) => s.signal.user_id),
    [people.edge.id],
  );
  assert.equal((await api(app.url, 'GET', '/api/optimization/suggestions')).status, 401);
});

test('lowering the quota to the suggestion ends the suggestion', async () => {
  const r = await api(app.url, 'PUT', `/api/admin/users/${people.edge.id}/quota`, {
    auth: cast.admin,
    body: { daily_token_quota: 2 },
  });
  assert.equal(r.status, 200);
  assert.equal(forUser(await suggestionsOf(cast.admin), people.edge.id), undefined);
});
