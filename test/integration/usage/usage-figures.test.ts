// Usage figures a finance team can trust (issue 26), on the real upload path and read APIs, with exact
// figures computed from the uploaded rows:
//   1. requests are assistant messages on every endpoint (analysis, analytics, ROI), never a usage
//      report's request_count;
//   2. a day of a tool on a host with messages is counted from them, never again from its usage
//      report, in every upload order and on re-uploads, incrementally and after a summary refresh;
//   3. every ISO 8601 timestamp form is stored (local time read as UTC), none refused;
//   4. /api/analysis/batch?host=H counts the active users of H only;
//   5. /api/messages lists newest first within a day (by timestamp).
// Each scenario uses its own tools, hosts or days, so they share one app.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { recomputeRepository } from '../../../db/repositories/usage/recompute.ts';
import { addDays, dayOf } from '../../../domain/usage/read-dates.ts';
import { buildCast, type Cast } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api } from '../../support/session.ts';
import { get } from './read-seed.ts';

let app: TestApp;
let cast: Cast;
let today: string;
const KEY = { 'x-upload-auth': 'test-upload-key' };

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  today = dayOf(app.clock.now());
});
after(async () => {
  await app?.close();
});

let n = 0;
const message = (tool: string, host: string, date: string, over: Record<string, unknown> = {}) => ({
  message_id: `f-${++n}`,
  date,
  tool_name: tool,
  host_name: host,
  role: 'assistant',
  content: `answer ${n}`,
  input_tokens: 100,
  output_tokens: 50,
  timestamp: `${date}T10:00:00Z`,
  ...over,
});

async function upload(body: Record<string, unknown>): Promise<void> {
  const r = await api(app.url, 'POST', '/api/upload/batch', { headers: KEY, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

const report = (tool: string, host: string, date: string, tokens: number, over = {}) => ({
  date,
  tool_name: tool,
  host_name: host,
  input_tokens: (tokens * 2) / 3,
  output_tokens: tokens / 3,
  cache_tokens: 40,
  request_count: 7,
  ...over,
});

/** The tool's figures in the system admin's /api/summary?host=. */
async function summaryOf(tool: string, host: string) {
  const s = await get(app, cast.admin, `/api/summary?host=${host}`);
  return s.tools.find((t: { tool_name: string }) => t.tool_name === tool) ?? null;
}

test('1. requests are assistant messages everywhere: a report request_count of 7 adds none', async () => {
  const d = addDays(today, -2);
  await upload({
    messages: [message('tool-r', 'hr', d)],
    usage: [report('tool-r', 'hr2', d, 1200)],
  });
  const w = `start=${d}&end=${d}`;
  const batch = await get(app, cast.admin, `/api/analysis/batch?${w}`);
  const tool = (list: Array<{ tool_name: string }>) => list.find((t) => t.tool_name === 'tool-r') as any;
  assert.deepEqual(
    [batch.totals.requests, batch.totals.tokens, tool(batch.by_tool).requests, tool(batch.by_tool).tokens],
    [1, 1350, 1, 1350],
  );
  assert.deepEqual(batch.daily, [
    { date: d, tokens: 1350, input_tokens: 900, output_tokens: 450, requests: 1 },
  ]);
  const comparison = await get(app, cast.admin, '/api/analysis/tool-comparison');
  assert.equal(tool(comparison.tools).requests, 1);
  assert.equal(tool(comparison.tools).tokens_per_request, 1350);
  const reportAnswer = await get(app, cast.admin, '/api/analytics/report?anomalies=false&trends=false');
  assert.equal(tool(reportAnswer.by_tool).requests, 1);
  const efficiency = await get(app, cast.admin, '/api/analytics/efficiency');
  assert.equal(tool(efficiency.by_tool).requests, 1);
  const roi = await get(
    app,
    cast.admin,
    `/api/roi/by-tool?start_date=${d}&end_date=${d}&avg_time_saved_per_request=6&hourly_labor_cost=50&productivity_multiplier=1`,
  );
  const r = tool(roi.items);
  assert.deepEqual([r.requests, r.tokens, r.hours_saved, r.labor_value], [1, 1350, 0.1, 5]);
  // The endpoints that were right stay right: the same 1 request.
  assert.equal((await summaryOf('tool-r', 'hr2')).requests, 0);
  assert.equal((await summaryOf('tool-r', 'hr')).requests, 1);
  const byTool = await get(app, cast.admin, `/api/usage/request/by-tool?${w}`);
  assert.equal(byTool.by_tool['tool-r'], 1);
});

/** The figures of a tool and host everywhere the rule must hold. */
async function figuresOf(tool: string, host: string, date: string) {
  const s = await summaryOf(tool, host);
  const range = await get(app, cast.admin, `/api/range?start=${date}&end=${date}&host=${host}&tool=${tool}`);
  const [stored] = await app.database.sql.query<Record<string, unknown>>(
    'SELECT total_tokens, total_requests FROM usage_summary WHERE tool_name = ? AND host_name = ?',
    [tool, host],
  );
  return {
    summary: [s.tokens, s.requests],
    range: [
      range.total_tokens,
      range.total_input_tokens,
      range.total_output_tokens,
      range.total_cache_tokens,
    ],
    usage_summary: [Number(stored?.total_tokens), Number(stored?.total_requests)],
  };
}

/** The summary refresh's recompute of usage_summary (the workflow's SQL; no worker in this file). */
const refresh = () => recomputeRepository(app.database).recomputeUsageSummary(null);

test('2. messages then their report: 600 tokens were counted for 300; now 300, re-uploads included', async () => {
  const d = addDays(today, -3);
  const msgs = [
    message('tool-m', 'hm', d),
    message('tool-m', 'hm', d, { role: 'user', input_tokens: 0, output_tokens: 0 }),
    message('tool-m', 'hm', d),
  ];
  await upload({ messages: msgs });
  await upload({ usage: [report('tool-m', 'hm', d, 300)] });
  const want = { summary: [300, 2], range: [300, 200, 100, 0], usage_summary: [300, 2] };
  assert.deepEqual(await figuresOf('tool-m', 'hm', d), want);
  // A newer report of the same day and the same messages again change nothing.
  await upload({ usage: [report('tool-m', 'hm', d, 900)] });
  await upload({ messages: msgs });
  assert.deepEqual(await figuresOf('tool-m', 'hm', d), want);
  await refresh();
  assert.deepEqual(await figuresOf('tool-m', 'hm', d), want);
});

test('2. a report then the messages of its day: the report is taken back out, counted once', async () => {
  const d = addDays(today, -3);
  await upload({ usage: [report('tool-n', 'hn', d, 300)] });
  // Alone, the report counts (tokens and cache tokens, never requests).
  assert.deepEqual(await figuresOf('tool-n', 'hn', d), {
    summary: [300, 0],
    range: [300, 200, 100, 40],
    usage_summary: [300, 0],
  });
  await upload({ messages: [message('tool-n', 'hn', d), message('tool-n', 'hn', d)] });
  const want = { summary: [300, 2], range: [300, 200, 100, 0], usage_summary: [300, 2] };
  assert.deepEqual(await figuresOf('tool-n', 'hn', d), want);
  await upload({ usage: [report('tool-n', 'hn', d, 600)] });
  assert.deepEqual(await figuresOf('tool-n', 'hn', d), want);
  await refresh();
  assert.deepEqual(await figuresOf('tool-n', 'hn', d), want);
  // The tenant's usage agrees (the unknown sender's messages and the report are both tenant 1's).
  const [tu] = await app.database.sql.query<Record<string, unknown>>(
    'SELECT tokens_used FROM tenant_usage WHERE tenant_id = 1 AND date = ?',
    [d],
  );
  assert.equal(Number(tu?.tokens_used), 600, 'tool-m and tool-n: 300 each');
});

test('2. both in one batch, and a report alone replaced by a newer one', async () => {
  const d = addDays(today, -4);
  await upload({
    messages: [message('tool-b', 'hb', d), message('tool-b', 'hb', d)],
    usage: [report('tool-b', 'hb', d, 300), report('tool-b', 'hb-other', d, 450)],
  });
  assert.deepEqual((await figuresOf('tool-b', 'hb', d)).summary, [300, 2]);
  assert.deepEqual((await figuresOf('tool-b', 'hb-other', d)).summary, [450, 0]);
  await upload({ usage: [report('tool-b', 'hb-other', d, 600)] });
  assert.deepEqual(await figuresOf('tool-b', 'hb-other', d), {
    summary: [600, 0],
    range: [600, 400, 200, 40],
    usage_summary: [600, 0],
  });
});

test('3. every ISO 8601 timestamp form is stored; a time without a zone is UTC', async () => {
  const forms: Array<[string, string]> = [
    ['2026-03-01T10:15:00', '2026-03-01T10:15:00.000Z'],
    ['2026-03-01T10:15:00.123456', '2026-03-01T10:15:00.123Z'],
    ['2026-03-01 10:15:00.5', '2026-03-01T10:15:00.500Z'],
    ['2026-03-01T10:15:00.25+05:30', '2026-03-01T04:45:00.250Z'],
    ['2026-03-01T23:30:00-0200', '2026-03-02T01:30:00.000Z'],
    ['2026-03-01T10:15+01', '2026-03-01T09:15:00.000Z'],
    ['20260301T101500Z', '2026-03-01T10:15:00.000Z'],
    ['2026-03-01T10:15:00,75Z', '2026-03-01T10:15:00.750Z'],
  ];
  // A batch row without `date` falls on its timestamp's UTC day.
  await upload({
    messages: forms.map(([timestamp], i) => ({
      message_id: `t-${i}`,
      tool_name: 'tool-t',
      host_name: 'ht',
      role: 'assistant',
      timestamp,
    })),
  });
  const listed = await get(app, cast.admin, '/api/messages?tool=tool-t&host=ht&limit=50');
  const byId = new Map(listed.messages.map((m: any) => [m.message_id, [m.timestamp, m.date]]));
  assert.deepEqual(
    forms.map((_, i) => byId.get(`t-${i}`)),
    forms.map(([, iso]) => [iso, iso.slice(0, 10)]),
  );
  // The hourly figures bucket them by their UTC hour.
  const hourly = await get(app, cast.admin, '/api/analysis/hourly-usage?date=2026-03-01&tool=tool-t&host=ht');
  const requestsAt = (h: number) => hourly.hours[h].requests;
  assert.deepEqual([requestsAt(10), requestsAt(4), requestsAt(9)], [5, 1, 1]);
});

test('4. /api/analysis/batch?host= counts the active users of that host only', async () => {
  const d = addDays(today, -20);
  const userA = cast.actors.user.session!.user.username;
  const manager = cast.actors.manager.session!.user.username;
  await upload({
    messages: [
      message('tool-u', 'hu1', d, { sender_name: userA }),
      message('tool-u', 'hu2', d, { sender_name: manager }),
    ],
  });
  const at = (host?: string) =>
    get(app, cast.admin, `/api/analysis/batch?start=${d}&end=${d}${host ? `&host=${host}` : ''}`);
  assert.deepEqual(
    [
      (await at('hu1')).totals.active_users,
      (await at('hu1')).totals.tokens,
      (await at('hu1')).totals.requests,
    ],
    [1, 150, 1],
  );
  assert.equal((await at('hu2')).totals.active_users, 1);
  assert.equal((await at('nowhere')).totals.active_users, 0);
  assert.equal((await at()).totals.active_users, 2);
});

test('5. /api/messages is newest first within a day, by timestamp; untimed messages last', async () => {
  const d = addDays(today, -30);
  const at = (hh: string) => ({ timestamp: `${d}T${hh}:00:00Z` });
  await upload({
    messages: [
      message('tool-o', 'ho', d, { message_id: 'o-noon', ...at('12') }),
      message('tool-o', 'ho', d, { message_id: 'o-nine', ...at('09') }),
      message('tool-o', 'ho', d, { message_id: 'o-three', ...at('15') }),
      message('tool-o', 'ho', d, { message_id: 'o-untimed', timestamp: null }),
    ],
  });
  await upload({ messages: [message('tool-o', 'ho', d, { message_id: 'o-late-upload', ...at('08') })] });
  const listed = await get(app, cast.admin, '/api/messages?tool=tool-o&host=ho');
  assert.deepEqual(
    listed.messages.map((m: { message_id: string }) => m.message_id),
    ['o-three', 'o-noon', 'o-nine', 'o-late-upload', 'o-untimed'],
  );
});
