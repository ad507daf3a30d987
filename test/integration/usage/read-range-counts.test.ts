// GET /api/range and /api/tool/:tool_name/:days read their request counts (rule 3) in one pass over
// the range's assistant messages (requestReadRepository.byDayAndTool, issue 14 "Measure": the
// dashboard's first load with 1M messages). The figures must be exactly those of the two separate
// counts (byDay, byTool) they replace: checked here at the repository for every scope kind and filter,
// and over HTTP against the request-statistics endpoints, which still count per day and per tool
// separately. Data: read-seed.ts (two tenants, three tools, two hosts, today and earlier days).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestReadRepository } from '../../../db/repositories/usage/read-requests.ts';
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { TestApp } from '../../support/harness.ts';
import { get, type Seeded, withSeededApp } from './read-seed.ts';

let app: TestApp;
let s: Seeded;
withSeededApp((a, seeded) => {
  app = a;
  s = seeded;
});

test('byDayAndTool equals byDay and byTool for every scope and filter', async () => {
  const requests = requestReadRepository(app.database.sql);
  const [tenantA] = await app.database.sql.query<{ tenant_id: number }>(
    'SELECT tenant_id FROM users WHERE id = ?',
    [s.userA.user.id],
  );
  const scopes: ReadScope[] = [
    { kind: 'all' },
    { kind: 'tenant', tenantId: Number(tenantA!.tenant_id) },
    { kind: 'tenant', tenantId: 999_999 },
    { kind: 'none' },
  ];
  const filters = [
    { start: s.day(-40), end: s.today },
    { start: s.day(-6), end: s.today },
    { start: s.day(-10), end: s.day(-1) },
    { start: s.today, end: s.today, host: 'h2' },
    { start: s.day(-40), end: s.today, tool: 'tool-x' },
  ];
  let nonEmpty = 0;
  for (const scope of scopes)
    for (const f of filters) {
      const both = await requests.byDayAndTool(scope, f);
      const byDay = await requests.byDay(scope, f);
      const byTool = await requests.byTool(scope, f);
      const what = `${JSON.stringify(scope)} ${JSON.stringify(f)}`;
      assert.deepEqual(Object.fromEntries(both.byDay), Object.fromEntries(byDay), what);
      assert.deepEqual(Object.fromEntries(both.byTool), Object.fromEntries(byTool), what);
      if (byDay.size > 0) nonEmpty++;
    }
  // The comparison means something: most scope and filter pairs hold requests.
  assert.ok(nonEmpty >= 8, `only ${nonEmpty} non-empty cases`);
  const none = await requests.byDayAndTool({ kind: 'none' }, filters[0]!);
  assert.equal(none.byDay.size + none.byTool.size, 0);
});

test('/api/range and /api/tool/:tool/:days give the request counts of the request-statistics endpoints', async () => {
  const range = `start=${s.day(-40)}&end=${s.today}`;
  for (const who of [s.userA, s.admin, s.adminB, s.noTenant, s.readonlyA]) {
    for (const host of ['', '&host=h2']) {
      const r = await get(app, who, `/api/range?${range}${host}`);
      const byTool = (await get(app, who, `/api/usage/request/by-tool?${range}${host}`)).by_tool;
      const trend = (await get(app, who, `/api/usage/request/trend?${range}${host}`)).trend;
      const fromRange = Object.fromEntries(
        r.tools.filter((t: any) => t.requests > 0).map((t: any) => [t.tool_name, t.requests]),
      );
      assert.deepEqual(fromRange, byTool, `${who.user.username}${host}`);
      assert.deepEqual(
        r.daily.map((d: any) => [d.date, d.requests]),
        trend.map((d: any) => [d.date, d.requests]),
        `${who.user.username}${host}`,
      );
      assert.equal(
        r.total_requests,
        trend.reduce((a: number, d: any) => a + d.requests, 0),
      );
    }
    const tool = await get(app, who, '/api/tool/tool-x/41');
    const toolCounts = (await get(app, who, `/api/usage/request/by-tool?${range}`)).by_tool;
    assert.equal(tool.total_requests, toolCounts['tool-x'] ?? 0, who.user.username);
    assert.equal(
      tool.daily.reduce((a: number, d: any) => a + d.requests, 0),
      toolCounts['tool-x'] ?? 0,
    );
  }
  assert.ok((await get(app, s.admin, `/api/range?${range}`)).total_requests >= 4);
});
