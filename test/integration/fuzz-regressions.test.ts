// Regressions of the defects `npm run fuzz` (test/fuzz/run.ts) found, each on the real API and
// checked against the real /api/openapi.json:
//   1. uploaded counts near 2^53 summed into figures above Number.MAX_SAFE_INTEGER (GET /api/summary,
//      GET /api/tenants answered imprecise integers): one row's count is now at most 10^12;
//   2. POST /api/remote/agent/message documented `rejected_events` as an array; it is a count;
//   3. the model proxy's errors ({error: {message, type}}) broke the generic {error: string} schema;
//   4. GET /api/content/filter/stats documented `scope` as a string; a tenant admin gets {tenant_id};
//   5. the CSV exports (format=csv) answered an undocumented text/csv;
//   6. the spec-reserved 501 answers (WebSocket agent transport, machine browse) were undocumented;
//   7. a summary refresh over uploads dated 0001-01-01 and 9999-12-31 planned 118,000 chunks (a 2.6 MB
//      activity answer in the workflow history, and steps without end): chunks are now at most 60;
//   8. a user token quota (in millions) above 9,007,199,254 made token_limit pass 2^53 in the quota
//      answers: such a quota is now refused;
//   9. on PostgreSQL a user id above 2^31-1 (an int4 column) in a path or body failed the query: 500s
//      from the user admin, audit, compliance profile and machine assignment routes; now a 400.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  chunkDaysFor,
  dateChunks,
  REFRESH_CHUNK_DAYS,
  REFRESH_MAX_CHUNKS,
} from '../../activities/usage/summary-refresh.ts';
import { DATE_KEYED_TABLES } from '../../db/repositories/usage/recompute.ts';
import { MAX_USER_TOKEN_QUOTA_MILLIONS } from '../../domain/quota.ts';
import { MAX_UPLOAD_COUNT } from '../../domain/usage/ingest-rows.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { seedWorld, type World } from '../fuzz/world.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { waitUntil } from '../support/remote.ts';
import { api } from '../support/session.ts';

type Json = Record<string, any>;
let app: TestApp;
let mock: MockProvider;
let world: World;
let doc: Json;

before(async () => {
  app = await startTestApp({ worker: true });
  mock = await startMockProvider();
  world = await seedWorld(app, mock.url);
  doc = (await api(app.url, 'GET', '/api/openapi.json')).body;
});
after(async () => {
  await app?.close();
  await mock?.close();
});

const headersOf = (name: string) => world.roles.find((r) => r.name === name)!.headers;

/** The documented schema of one answer (components resolved by Ajv), or fails when undocumented. */
function assertDocumented(
  method: string,
  template: string,
  status: number,
  mediaType: string,
  body: unknown,
) {
  const op = doc.paths[template]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${template} is documented`);
  let response = op.responses[String(status)];
  assert.ok(response, `${method} ${template} documents ${status}`);
  if (response.$ref) response = doc.components.responses[response.$ref.split('/').pop()];
  const content = response.content?.[mediaType];
  assert.ok(content, `${method} ${template} ${status} documents ${mediaType}`);
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const schema = JSON.parse(JSON.stringify(content.schema).replaceAll('"#/components/', '"doc#/components/'));
  assert.ok(ajv.validate(schema, body), `${method} ${template} ${status}: ${ajv.errorsText()}`);
}

const upload = (body: unknown) =>
  api(app.url, 'POST', '/api/upload/usage', {
    headers: { 'x-upload-auth': app.settings.SVC_UPLOAD_AUTH_KEY! },
    body,
  });

test('an uploaded count above 10^12 is refused naming the field; figures stay safe integers', async () => {
  const day = new Date().toISOString().slice(0, 10);
  const tool = `fuzz-big-${randomUUID().slice(0, 8)}`;
  for (const value of [2 ** 52, MAX_UPLOAD_COUNT + 1, String(2 ** 52)]) {
    const r = await upload({ date: day, tool_name: tool, input_tokens: value });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.match(r.body.error, /No valid rows/);
    // The rejected row names its field and the bound.
    assert.deepEqual(r.body.rejected, [
      { index: 0, field: 'input_tokens', error: 'must be at most 1000000000000' },
    ]);
  }
  // At the bound: accepted, and many such rows still sum far below 2^53.
  for (let i = 0; i < 5; i++) {
    const r = await upload({
      date: day,
      tool_name: tool,
      host_name: `h${i}`,
      input_tokens: MAX_UPLOAD_COUNT,
      output_tokens: MAX_UPLOAD_COUNT,
      tokens_used: MAX_UPLOAD_COUNT,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  for (const path of ['/api/summary', '/api/tenants']) {
    const r = await api(app.url, 'GET', path, { headers: headersOf('platform_admin') });
    assert.equal(r.status, 200);
    assertDocumented('GET', path, 200, 'application/json', r.body);
  }
  const summary = await api(app.url, 'GET', '/api/summary', { headers: headersOf('platform_admin') });
  assert.ok(Number.isSafeInteger(summary.body.total_tokens));
  assert.ok(summary.body.total_tokens >= 5 * MAX_UPLOAD_COUNT);
});

test('the agent poll answer with rejected events is the count the protocol names, as documented', async () => {
  const r = await api(app.url, 'POST', '/api/remote/agent/message', {
    headers: headersOf('agent'),
    body: {
      wait_ms: 0,
      heartbeat: { active_sessions: [], agent_version: '0.1.0-test' },
      events: [{ type: 'no-such-event' }, { nonsense: true }],
    },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.rejected_events, 2);
  assertDocumented('POST', '/api/remote/agent/message', 200, 'application/json', r.body);
});

test("the model proxy's refusals have the provider-style body the document names", async () => {
  for (const [headers, status] of [
    [{}, 401],
    [{ authorization: 'Bearer svcpt_not_a_token' }, 401],
    [headersOf('proxy_token'), 404],
  ] as const) {
    const r = await api(app.url, 'POST', '/api/remote/llm-proxy/v1/not-an-endpoint', { headers, body: {} });
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(typeof r.body.error.message, 'string');
    assertDocumented('POST', '/api/remote/llm-proxy/{path}', status, 'application/json', r.body);
  }
  const bare = await api(app.url, 'POST', '/api/remote/llm-proxy', { body: {} });
  assert.equal(bare.status, 401);
  assertDocumented('POST', '/api/remote/llm-proxy', 401, 'application/json', bare.body);
});

test('content filter stats: a tenant scope for a tenant admin, all for a system admin, as documented', async () => {
  const tenant = await api(app.url, 'GET', '/api/content/filter/stats', {
    headers: headersOf('tenant_admin'),
  });
  assert.equal(tenant.status, 200);
  assert.deepEqual(tenant.body.scope, { tenant_id: world.tenantA });
  assertDocumented('GET', '/api/content/filter/stats', 200, 'application/json', tenant.body);
  const all = await api(app.url, 'GET', '/api/content/filter/stats', {
    headers: headersOf('platform_admin'),
  });
  assert.equal(all.status, 200);
  assert.equal(all.body.scope, 'all');
  assertDocumented('GET', '/api/content/filter/stats', 200, 'application/json', all.body);
});

test('the CSV exports answer the text/csv they document', async () => {
  const day = new Date().toISOString().slice(0, 10);
  for (const [method, path, template, status, body] of [
    ['GET', '/api/analytics/export?format=csv', '/api/analytics/export', 200, undefined],
    ['GET', '/api/audit/logs/export?format=csv', '/api/audit/logs/export', 200, undefined],
    [
      'POST',
      '/api/compliance/reports',
      '/api/compliance/reports',
      201,
      { report_type: 'usage_summary', period_start: day, period_end: day, format: 'csv' },
    ],
  ] as const) {
    const r = await api(app.url, method, path, { headers: headersOf('tenant_admin'), body });
    assert.equal(r.status, status, `${path}: ${JSON.stringify(r.body)}`);
    assert.match(r.res.headers.get('content-type') ?? '', /^text\/csv/);
    assertDocumented(method, template, status, 'text/csv', r.body);
  }
});

test('the spec-reserved 501 answers are documented', async () => {
  const ws = await api(app.url, 'GET', '/api/remote/agent/ws');
  assert.equal(ws.status, 501);
  assertDocumented('GET', '/api/remote/agent/ws', 501, 'application/json', ws.body);
  const machineA = world.ids[world.tenantA]!.id!.find((v) => typeof v === 'string' && v.length === 36)!;
  const browse = await api(app.url, 'GET', `/api/remote/machines/${machineA}/browse`, {
    headers: headersOf('platform_admin'),
  });
  assert.equal(browse.status, 501);
  assertDocumented('GET', '/api/remote/machines/{id}/browse', 501, 'application/json', browse.body);
  // Logged as an answer, without the stack trace pino-http makes up for a 5xx (DESIGN: none in logs).
  const lines = app.logs
    .join('')
    .split('\n')
    .filter((l) => l.includes('/api/remote/agent/ws') || l.includes('/browse'));
  assert.ok(lines.length >= 2, 'both answers were logged');
  for (const l of lines) {
    assert.doesNotMatch(l, /"stack"|failed with status code/, l);
    assert.equal(JSON.parse(l).level, 30, 'logged at info');
  }
});

test('a summary refresh over dates from year 1 to 9999 plans at most 60 chunks and completes', async () => {
  // The rule itself: 31-day chunks for a year, wider ones (never more than the bound) for millennia.
  assert.equal(chunkDaysFor('2026-01-01', '2026-12-31'), REFRESH_CHUNK_DAYS);
  const wide = dateChunks('0001-01-01', '9999-12-31', chunkDaysFor('0001-01-01', '9999-12-31'));
  assert.ok(wide.length <= REFRESH_MAX_CHUNKS, `${wide.length} chunks`);
  assert.equal(wide[0]![0], '0001-01-01');
  assert.equal(wide.at(-1)![1], '9999-12-31');
  for (let i = 1; i < wide.length; i++)
    assert.equal(Date.parse(wide[i]![0]) - Date.parse(wide[i - 1]![1]), 86_400_000, 'contiguous');

  const host = `fuzz-span-${randomUUID().slice(0, 8)}`;
  const r = await api(app.url, 'POST', '/api/upload/batch', {
    headers: { 'x-upload-auth': app.settings.SVC_UPLOAD_AUTH_KEY! },
    body: {
      messages: ['0001-01-01', '9999-12-31'].map((date) => ({
        tool_name: 'claude',
        host_name: host,
        message_id: randomUUID(),
        role: 'assistant',
        content: 'far',
        input_tokens: 1,
        output_tokens: 1,
        timestamp: `${date}T12:00:00Z`,
        date,
      })),
    },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const admin = headersOf('platform_admin');
  const started = await api(app.url, 'POST', `/api/summary/refresh?host=${host}`, { headers: admin });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const done = await waitUntil(
    'the refresh to complete',
    async () => {
      const s = await api(app.url, 'GET', started.body.status_url, { headers: admin });
      assert.equal(s.status, 200, JSON.stringify(s.body));
      assert.notEqual(s.body.status, 'failed', JSON.stringify(s.body));
      return s.body.status === 'completed' ? s.body : undefined;
    },
    120_000,
    250,
  );
  const progress = done.progress;
  assert.equal(progress.first_date, '0001-01-01');
  assert.equal(progress.last_date, '9999-12-31');
  assert.equal(progress.steps_total, DATE_KEYED_TABLES.length * (wide.length + 1) + 1);
  assert.equal(progress.steps_done, progress.steps_total);
});

test('a user token quota whose token figure would pass 2^53 is refused; the largest one answers exactly', async () => {
  const admin = headersOf('platform_admin');
  const userId = world.ids[world.tenantA]!.user_id![0]!;
  const set = (body: unknown) =>
    api(app.url, 'PUT', `/api/admin/users/${userId}/quota`, { headers: admin, body });
  for (const field of ['daily_token_quota', 'monthly_token_quota']) {
    const r = await set({ [field]: MAX_USER_TOKEN_QUOTA_MILLIONS + 1 });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.match(r.body.error, new RegExp(field));
  }
  const ok = await set({
    daily_token_quota: MAX_USER_TOKEN_QUOTA_MILLIONS,
    monthly_token_quota: MAX_USER_TOKEN_QUOTA_MILLIONS,
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  // Request quotas are plain counts: any safe integer is still taken.
  assert.equal((await set({ daily_request_quota: Number.MAX_SAFE_INTEGER })).status, 200);
  for (const [method, path, template] of [
    ['GET', '/api/quota/status/all', '/api/quota/status/all'],
    ['GET', '/api/admin/quota/usage', '/api/admin/quota/usage'],
  ] as const) {
    const r = await api(app.url, method, path, { headers: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assertDocumented(method, template, 200, 'application/json', r.body);
  }
  const all = await api(app.url, 'GET', '/api/quota/status/all', { headers: admin });
  const limits = JSON.stringify(all.body);
  assert.ok(
    limits.includes(String(MAX_USER_TOKEN_QUOTA_MILLIONS * 1_000_000)),
    'the exact token figure is answered',
  );
});

test('a user id beyond a 32-bit column is refused (400, or the 403/404 the caller gets first), never a 500', async () => {
  const big = 9007199254740990;
  const machine = world.ids[world.tenantA]!.id!.find((v) => typeof v === 'string' && v.length === 36)!;
  for (const name of ['platform_admin', 'legacy_admin', 'tenant_admin', 'other_tenant_admin']) {
    const headers = headersOf(name);
    for (const [method, path, body] of [
      ['DELETE', `/api/admin/users/${big}`, undefined],
      ['PUT', `/api/admin/users/${big}`, { email: 'x@example.test' }],
      ['PUT', `/api/admin/users/${big}/password`, { password: 'Another-password-123' }],
      ['PUT', `/api/admin/users/${big}/quota`, { daily_request_quota: 1 }],
      ['GET', `/api/audit/user/${big}/activity`, undefined],
      ['GET', `/api/audit-logs?user_id=${big}`, undefined],
      ['GET', `/api/compliance/audit/user/${big}/profile`, undefined],
      ['POST', `/api/remote/machines/${machine}/assign`, { user_id: big, permission: 'user' }],
      ['DELETE', `/api/remote/machines/${machine}/assign/${big}`, undefined],
    ] as const) {
      const r = await api(app.url, method, path, { headers, body });
      assert.ok(r.status < 500, `${name} ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      assert.ok([400, 403, 404].includes(r.status), `${name} ${method} ${path}: ${r.status}`);
      assert.equal(typeof r.body.error, 'string');
    }
  }
  // The refusal names the field it is about.
  const uid = await api(app.url, 'DELETE', `/api/remote/machines/${machine}/assign/${big}`, {
    headers: headersOf('platform_admin'),
  });
  assert.equal(uid.status, 400);
  assert.match(uid.body.error, /^uid: /);
  // The largest 32-bit id is still an ordinary unknown user.
  const r = await api(app.url, 'DELETE', '/api/admin/users/2147483647', {
    headers: headersOf('platform_admin'),
  });
  assert.equal(r.status, 404, JSON.stringify(r.body));
});
