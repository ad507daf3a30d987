// The "Request statistics" read APIs and /api/report/my-usage (issue 10 item 4) on the real API,
// database and upload path: request counting by rule 3 (assistant messages only: user and system
// messages and a usage report's request_count are not requests), the exact `today` shape, every
// default (30 days, today, the current month), the 400s naming the parameter, and tenant isolation.
// Data: read-seed.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TestApp } from '../../support/harness.ts';
import { api } from '../../support/session.ts';
import { get, type Seeded, withSeededApp } from './read-seed.ts';

let app: TestApp;
let s: Seeded;
withSeededApp((a, seeded) => {
  app = a;
  s = seeded;
});

const sum = (list: any[], k: string) => list.reduce((a, x) => a + x[k], 0);

test('request/today: the exact shape; assistant messages only; per tenant', async () => {
  const a = await get(app, s.userA, '/api/usage/request/today');
  assert.deepEqual(Object.keys(a).sort(), ['_meta', 'by_tool', 'date', 'total_requests']);
  assert.equal(a.date, s.today);
  assert.equal(a.total_requests, 2);
  assert.deepEqual(a.by_tool, { 'tool-x': 1, 'tool-y': 1 });
  assert.deepEqual(Object.keys(a._meta).sort(), ['definition', 'note', 'source', 'status']);
  assert.equal(a._meta.status, 'implemented');
  assert.equal(a._meta.source, 'daily_messages');
  for (const k of ['definition', 'note']) assert.equal(typeof a._meta[k], 'string');
  const admin = await get(app, s.admin, '/api/usage/request/today');
  // The usage report's request_count (99) is not a request by rule 3.
  assert.deepEqual(admin.by_tool, { 'tool-x': 2, 'tool-y': 1, 'tool-z': 1 });
  assert.equal(admin.total_requests, 4);
  assert.deepEqual((await get(app, s.adminB, '/api/usage/request/today')).by_tool, { 'tool-x': 1 });
  const none = await get(app, s.noTenant, '/api/usage/request/today');
  assert.equal(none.total_requests, 0);
  assert.deepEqual(none.by_tool, {});
  assert.equal((await get(app, s.readonlyA, '/api/usage/request/today')).total_requests, 2);
  assert.equal((await api(app.url, 'GET', '/api/usage/request/today')).status, 401);
});

test('request/trend: 30 days ago to today, one entry per day, host filter, 400s', async () => {
  const t = await get(app, s.userA, '/api/usage/request/trend');
  assert.equal(t.start, s.day(-30));
  assert.equal(t.end, s.today);
  assert.equal(t.trend.length, 31);
  assert.equal(t.total_requests, 4);
  assert.equal(sum(t.trend, 'requests'), 4);
  assert.deepEqual(t.trend.at(-1), { date: s.today, requests: 2 });
  assert.equal((await get(app, s.userA, '/api/usage/request/trend?host=h2')).total_requests, 1);
  assert.equal((await get(app, s.userA, `/api/usage/request/trend?start=${s.day(-40)}`)).total_requests, 5);
  assert.equal((await get(app, s.adminB, '/api/usage/request/trend')).total_requests, 1);
  assert.equal((await get(app, s.noTenant, '/api/usage/request/trend')).total_requests, 0);
  const q = '/api/usage/request/trend';
  assert.match((await get(app, s.userA, `${q}?start=${s.today}&end=${s.day(-2)}`, 400)).error, /^end:/);
  assert.match((await get(app, s.userA, `${q}?end=tomorrow`, 400)).error, /^end:/);
  assert.match((await get(app, s.userA, `${q}?start=${s.day(-367)}`, 400)).error, /^start:/);
});

test('request/by-tool: per tool over the range (30 days by default)', async () => {
  const r = await get(app, s.userA, '/api/usage/request/by-tool');
  assert.equal(r.start, s.day(-30));
  assert.equal(r.end, s.today);
  assert.deepEqual(r.by_tool, { 'tool-x': 3, 'tool-y': 1 });
  assert.equal(r.total_requests, 4);
  const all = await get(app, s.userA, `/api/usage/request/by-tool?start=${s.day(-40)}&end=${s.today}`);
  assert.deepEqual(all.by_tool, { 'tool-x': 4, 'tool-y': 1 });
  assert.deepEqual((await get(app, s.userA, '/api/usage/request/by-tool?host=h1')).by_tool, { 'tool-x': 3 });
  assert.deepEqual((await get(app, s.adminB, '/api/usage/request/by-tool')).by_tool, { 'tool-x': 1 });
  assert.deepEqual((await get(app, s.admin, '/api/usage/request/by-tool')).by_tool, {
    'tool-x': 4,
    'tool-y': 1,
    'tool-z': 1,
  });
  assert.match(
    (await get(app, s.userA, '/api/usage/request/by-tool?start=2026-02-31', 400)).error,
    /^start:/,
  );
});

test('request/by-user: today by default; users by name, unknown senders by sender name', async () => {
  const a = await get(app, s.userA, '/api/usage/request/by-user');
  assert.equal(a.date, s.today);
  assert.deepEqual(a.users, [
    { user_id: s.userA.user.id, user_name: s.userA.user.username, requests: 2, tokens: 180 },
  ]);
  assert.equal(a.total_requests, 2);
  const admin = await get(app, s.admin, '/api/usage/request/by-user');
  assert.deepEqual(
    admin.users.map((u: any) => [u.user_name, u.requests]),
    [
      [s.userA.user.username, 2],
      ['ghost', 1],
      [s.adminB.user.username, 1],
    ],
  );
  assert.equal(admin.users.find((u: any) => u.user_name === 'ghost').user_id, null);
  assert.deepEqual(
    (await get(app, s.adminB, '/api/usage/request/by-user')).users.map((u: any) => u.user_name),
    [s.adminB.user.username],
  );
  assert.equal((await get(app, s.userA, `/api/usage/request/by-user?date=${s.day(-1)}`)).total_requests, 1);
  assert.equal((await get(app, s.userA, '/api/usage/request/by-user?host=h2')).total_requests, 1);
  assert.deepEqual((await get(app, s.noTenant, '/api/usage/request/by-user')).users, []);
  assert.match((await get(app, s.userA, '/api/usage/request/by-user?date=2026/01/01', 400)).error, /^date:/);
});

test('request/user/:user_name/trend: one user in the scope; other tenants read as nobody', async () => {
  const name = s.userA.user.username;
  const t = await get(app, s.userA, `/api/usage/request/user/${name}/trend`);
  assert.equal(t.user_name, name);
  assert.equal(t.user_id, s.userA.user.id);
  assert.equal(t.start, s.day(-30));
  assert.equal(t.trend.length, 31);
  assert.equal(t.total_requests, 4);
  assert.equal(
    (await get(app, s.userA, `/api/usage/request/user/${name}/trend?host=h2&start=${s.day(-1)}`))
      .total_requests,
    1,
  );
  assert.equal((await get(app, s.admin, `/api/usage/request/user/${name}/trend`)).total_requests, 4);
  const fromB = await get(app, s.adminB, `/api/usage/request/user/${name}/trend`);
  assert.equal(fromB.total_requests, 0);
  assert.equal(fromB.user_id, null);
  assert.equal((await get(app, s.admin, '/api/usage/request/user/ghost/trend')).total_requests, 1);
  assert.equal((await get(app, s.userA, '/api/usage/request/user/ghost/trend')).total_requests, 0);
  assert.match(
    (
      await get(
        app,
        s.userA,
        `/api/usage/request/user/${name}/trend?end=${s.day(-60)}&start=${s.day(-1)}`,
        400,
      )
    ).error,
    /^end:/,
  );
});

test('request/monthly: the current month by default, a named month, 400s', async () => {
  const [year, month] = [Number(s.today.slice(0, 4)), Number(s.today.slice(5, 7))];
  const aDates = [s.today, s.today, s.day(-1), s.day(-10), s.day(-40)];
  const inMonth = (y: number, m: number) =>
    aDates.filter((d) => d.startsWith(`${y}-${String(m).padStart(2, '0')}`)).length;
  const cur = await get(app, s.userA, '/api/usage/request/monthly');
  assert.equal(cur.year, year);
  assert.equal(cur.month, month);
  assert.equal(cur.start, `${s.today.slice(0, 7)}-01`);
  assert.equal(cur.daily.length, Number(cur.end.slice(8, 10)));
  assert.equal(cur.total_requests, inMonth(year, month));
  assert.equal(sum(cur.daily, 'requests'), cur.total_requests);
  const old = s.day(-40);
  const [oy, om] = [Number(old.slice(0, 4)), Number(old.slice(5, 7))];
  const past = await get(app, s.userA, `/api/usage/request/monthly?year=${oy}&month=${om}`);
  assert.equal(past.total_requests, inMonth(oy, om));
  assert.ok(past.total_requests >= 1);
  assert.equal(past.by_tool['tool-x'] >= 1, true);
  assert.equal(
    (await get(app, s.adminB, `/api/usage/request/monthly?year=${oy}&month=${om}`)).total_requests,
    inMonth(oy, om) - aDates.filter((d) => d.startsWith(old.slice(0, 7))).length,
  );
  const feb = await get(app, s.userA, '/api/usage/request/monthly?year=2024&month=2');
  assert.equal(feb.end, '2024-02-29');
  assert.equal(feb.daily.length, 29);
  assert.match((await get(app, s.userA, '/api/usage/request/monthly?month=13', 400)).error, /^month:/);
  assert.match((await get(app, s.userA, '/api/usage/request/monthly?month=0', 400)).error, /^month:/);
  assert.match((await get(app, s.userA, '/api/usage/request/monthly?year=abc', 400)).error, /^year:/);
});

test('report/my-usage: the caller own messages only, 30 days by default', async () => {
  const me = await get(app, s.userA, '/api/report/my-usage');
  assert.equal(me.user_id, s.userA.user.id);
  assert.equal(me.username, s.userA.user.username);
  assert.equal(me.start, s.day(-30));
  assert.equal(me.end, s.today);
  assert.equal(me.total_tokens, 210);
  assert.equal(me.total_input_tokens, 141);
  assert.equal(me.total_output_tokens, 69);
  assert.equal(me.total_requests, 4);
  assert.equal(me.message_count, 6);
  assert.deepEqual(me.tools, [
    { tool_name: 'tool-x', tokens: 180, requests: 3, messages: 5 },
    { tool_name: 'tool-y', tokens: 30, requests: 1, messages: 1 },
  ]);
  assert.equal(me.daily.length, 31);
  assert.deepEqual(me.daily.at(-1), { date: s.today, tokens: 180, requests: 2, messages: 4 });
  assert.equal((await get(app, s.userA, `/api/report/my-usage?start=${s.day(-40)}`)).total_tokens, 215);
  const b = await get(app, s.adminB, '/api/report/my-usage');
  assert.equal(b.total_tokens, 1000);
  assert.equal(b.total_requests, 1);
  // Administrators and readers see only their own messages here: none.
  assert.equal((await get(app, s.admin, '/api/report/my-usage')).total_tokens, 0);
  assert.equal((await get(app, s.readonlyA, '/api/report/my-usage')).message_count, 0);
  assert.equal((await get(app, s.noTenant, '/api/report/my-usage')).total_requests, 0);
  assert.equal((await api(app.url, 'GET', '/api/report/my-usage')).status, 401);
  assert.match(
    (await get(app, s.userA, `/api/report/my-usage?start=${s.today}&end=${s.day(-1)}`, 400)).error,
    /^end:/,
  );
  assert.match((await get(app, s.userA, '/api/report/my-usage?start=01-01-2026', 400)).error, /^start:/);
});
