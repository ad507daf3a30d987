// The "Usage" read APIs (issue 10 item 4) on the real API, database and upload path: /api/summary's
// exact shape, /api/today, /api/date, /api/tool/:tool/:days, /api/range, /api/tools, /api/hosts,
// /api/trend with their defaults and 400s, tokens from every source but requests by rule 3 only, and
// tenant isolation (tenant A, tenant B, system admin, a user without tenant). Data: read-seed.ts.
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

test('summary: the exact shape, per tenant; tokens from every source, requests by rule 3', async () => {
  const a = await get(app, s.userA, '/api/summary');
  assert.deepEqual(a, {
    total_tokens: 215,
    total_input_tokens: 144,
    total_output_tokens: 71,
    total_requests: 5,
    tools: [
      { tool_name: 'tool-x', tokens: 185, requests: 4 },
      { tool_name: 'tool-y', tokens: 30, requests: 1 },
    ],
  });
  assert.deepEqual(await get(app, s.adminB, '/api/summary'), {
    total_tokens: 1000,
    total_input_tokens: 600,
    total_output_tokens: 400,
    total_requests: 1,
    tools: [{ tool_name: 'tool-x', tokens: 1000, requests: 1 }],
  });
  // The system admin sees every tenant, the usage report's tokens, but not its request_count (99).
  assert.deepEqual(await get(app, s.admin, '/api/summary'), {
    total_tokens: 2222,
    total_input_tokens: 748,
    total_output_tokens: 474,
    total_requests: 7,
    tools: [
      { tool_name: 'tool-x', tokens: 1185, requests: 5 },
      { tool_name: 'tool-y', tokens: 30, requests: 1 },
      { tool_name: 'tool-z', tokens: 1007, requests: 1 },
    ],
  });
  assert.deepEqual(await get(app, s.noTenant, '/api/summary'), {
    total_tokens: 0,
    total_input_tokens: 0,
    total_output_tokens: 0,
    total_requests: 0,
    tools: [],
  });
  const h2 = await get(app, s.userA, '/api/summary?host=h2');
  assert.deepEqual(h2.tools, [{ tool_name: 'tool-y', tokens: 30, requests: 1 }]);
  assert.equal(h2.total_tokens, 30);
  // readonly holds view_dashboard; anonymous is refused.
  assert.equal((await get(app, s.readonlyA, '/api/summary')).total_tokens, 215);
  assert.equal((await api(app.url, 'GET', '/api/summary')).status, 401);
  await get(app, s.userA, '/api/summary?host=', 400);
});

test('today and date/:date_str: per tool, with host and tool filters', async () => {
  const t = await get(app, s.userA, '/api/today');
  assert.equal(t.date, s.today);
  assert.equal(t.total_tokens, 180);
  assert.equal(t.total_requests, 2);
  assert.deepEqual(
    t.tools.map((x: any) => [x.tool_name, x.tokens, x.input_tokens, x.output_tokens, x.requests]),
    [
      ['tool-x', 150, 100, 50, 1],
      ['tool-y', 30, 20, 10, 1],
    ],
  );
  assert.deepEqual(
    (await get(app, s.userA, '/api/today?tool=tool-y')).tools.map((x: any) => x.tool_name),
    ['tool-y'],
  );
  assert.deepEqual(
    (await get(app, s.userA, '/api/today?host=h1')).tools.map((x: any) => x.tool_name),
    ['tool-x'],
  );
  assert.equal((await get(app, s.adminB, '/api/today')).total_tokens, 1000);
  assert.equal((await get(app, s.noTenant, '/api/today')).total_tokens, 0);

  const d = await get(app, s.userA, `/api/date/${s.day(-1)}`);
  assert.equal(d.date, s.day(-1));
  assert.equal(d.total_tokens, 20);
  assert.equal(d.total_requests, 1);
  assert.equal((await get(app, s.adminB, `/api/date/${s.day(-1)}`)).total_tokens, 0);
  assert.equal((await get(app, s.userA, `/api/date/${s.today}?tool=tool-x&host=h1`)).total_tokens, 150);
  assert.match((await get(app, s.userA, '/api/date/2026-02-30', 400)).error, /^date_str:/);
  assert.match((await get(app, s.userA, '/api/date/yesterday', 400)).error, /^date_str:/);
});

test('tool/:tool_name/:days: the last N days, capped; 400 for a non-positive or non-integer days', async () => {
  const r = await get(app, s.userA, '/api/tool/tool-x/7');
  assert.equal(r.tool_name, 'tool-x');
  assert.equal(r.days, 7);
  assert.equal(r.start, s.day(-6));
  assert.equal(r.end, s.today);
  assert.equal(r.daily.length, 7);
  assert.equal(r.total_tokens, 170);
  assert.equal(r.total_requests, 2);
  assert.deepEqual(r.daily.at(-1), {
    date: s.today,
    tokens: 150,
    input_tokens: 100,
    output_tokens: 50,
    cache_tokens: 0,
    requests: 1,
  });
  assert.equal((await get(app, s.userA, '/api/tool/tool-x/30?host=h2')).total_tokens, 0);
  assert.equal((await get(app, s.adminB, '/api/tool/tool-x/7')).total_tokens, 1000);
  const capped = await get(app, s.userA, '/api/tool/tool-x/5000');
  assert.equal(capped.days, 366);
  assert.equal(capped.daily.length, 366);
  for (const bad of ['0', '-1', '1.5', 'abc'])
    assert.match((await get(app, s.userA, `/api/tool/tool-x/${bad}`, 400)).error, /^days:/);
});

test('range: start 7 days ago and end today by default; validation names the parameter', async () => {
  const r = await get(app, s.userA, '/api/range');
  assert.equal(r.start, s.day(-7));
  assert.equal(r.end, s.today);
  assert.equal(r.daily.length, 8);
  assert.equal(r.total_tokens, 200);
  assert.equal(r.total_requests, 3);
  assert.deepEqual(
    r.tools.map((t: any) => t.tool_name),
    ['tool-x', 'tool-y'],
  );
  const past = await get(app, s.userA, `/api/range?start=${s.day(-10)}&end=${s.day(-1)}`);
  assert.equal(past.total_tokens, 30);
  assert.equal(past.total_requests, 2);
  assert.equal(past.daily.length, 10);
  const y = await get(app, s.userA, '/api/range?tool=tool-y&host=h2');
  assert.equal(y.total_tokens, 30);
  assert.equal((await get(app, s.adminB, '/api/range')).total_tokens, 1000);
  assert.match((await get(app, s.userA, `/api/range?start=${s.today}&end=${s.day(-1)}`, 400)).error, /^end:/);
  assert.match((await get(app, s.userA, '/api/range?start=2026-13-01', 400)).error, /^start:/);
  assert.match((await get(app, s.userA, '/api/range?end=20260101', 400)).error, /^end:/);
  assert.match((await get(app, s.userA, `/api/range?start=${s.day(-400)}`, 400)).error, /^start:.*366/);
});

test('tools and hosts: names with usage in the caller scope', async () => {
  assert.deepEqual(await get(app, s.userA, '/api/tools'), { tools: ['tool-x', 'tool-y'] });
  assert.deepEqual(await get(app, s.userA, '/api/hosts'), { hosts: ['h1', 'h2'] });
  assert.deepEqual(await get(app, s.adminB, '/api/tools'), { tools: ['tool-x'] });
  assert.deepEqual(await get(app, s.admin, '/api/tools'), { tools: ['tool-x', 'tool-y', 'tool-z'] });
  assert.deepEqual(await get(app, s.admin, '/api/hosts'), { hosts: ['h1', 'h2', 'h3', 'h4'] });
  assert.deepEqual(await get(app, s.noTenant, '/api/hosts'), { hosts: [] });
});

test('trend: 30 days ago to today by default, one entry per day, host filter, tenant scope', async () => {
  const t = await get(app, s.userA, '/api/trend');
  assert.equal(t.start, s.day(-30));
  assert.equal(t.end, s.today);
  assert.equal(t.trend.length, 31);
  assert.equal(
    t.trend.reduce((a: number, d: any) => a + d.tokens, 0),
    210,
  );
  assert.equal(
    t.trend.reduce((a: number, d: any) => a + d.requests, 0),
    4,
  );
  assert.deepEqual(t.trend[20], {
    date: s.day(-10),
    tokens: 10,
    input_tokens: 6,
    output_tokens: 4,
    cache_tokens: 0,
    requests: 1,
  });
  const h2 = await get(app, s.userA, '/api/trend?host=h2');
  assert.equal(
    h2.trend.reduce((a: number, d: any) => a + d.tokens, 0),
    30,
  );
  const b = await get(app, s.adminB, `/api/trend?start=${s.day(-1)}`);
  assert.deepEqual(
    b.trend.map((d: any) => d.tokens),
    [0, 1000],
  );
  assert.equal(
    (await get(app, s.noTenant, '/api/trend')).trend.every((d: any) => d.tokens === 0),
    true,
  );
  assert.match((await get(app, s.userA, '/api/trend?start=2026-02-29', 400)).error, /^start:/);
  assert.match((await get(app, s.userA, `/api/trend?start=${s.day(1)}`, 400)).error, /^end:/);
  // The default start is 30 days before today: an end two years ahead makes the range too long.
  assert.match((await get(app, s.userA, `/api/trend?end=${s.day(730)}`, 400)).error, /^end:.*366/);
  assert.equal((await get(app, s.userA, `/api/trend?end=${s.day(-1)}`)).start, s.day(-31));
});
