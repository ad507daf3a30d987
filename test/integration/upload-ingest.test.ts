// Upload ingestion (issue 10 item 1): POST /api/upload/messages and /api/upload/batch on the real API
// and database. Proves: the X-Upload-Auth statuses (401, 403, 503), per-row rejection with indexes
// (400 when nothing is valid, 207 naming the stored rows, nothing invalid stored), idempotent
// re-upload (no figure changes), every aggregate equal to a GROUP BY recompute from daily_messages,
// tenant attribution (tool account, username, unknown -> tenant 1), and a 10,000-row batch in chunks.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let tenantB: number;
let alice: number;
let bob: number;
const KEY = { 'x-upload-auth': 'test-upload-key' };

const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);

before(async () => {
  app = await startTestApp();
  const [t] = await q<{ id: number }>(
    `INSERT INTO tenants (name, slug) VALUES ('Tenant B', ?) RETURNING id`,
    [`b-${randomUUID().slice(0, 8)}`],
  );
  tenantB = Number(t!.id);
  const [a] = await q<{ id: number }>(
    `INSERT INTO users (username, password_hash, tenant_id) VALUES ('alice', 'x', ?) RETURNING id`,
    [tenantB],
  );
  alice = Number(a!.id);
  const [b] = await q<{ id: number }>(
    `INSERT INTO users (username, password_hash, tenant_id) VALUES ('bob', 'x', ?) RETURNING id`,
    [tenantB],
  );
  bob = Number(b!.id);
  await q(
    `INSERT INTO user_tool_accounts (user_id, tool_account, tool_type) VALUES (?, 'alice@laptop', 'claude')`,
    [alice],
  );
  await q(
    `INSERT INTO agent_sessions (session_id, tool_name, user_id, tenant_id) VALUES ('sess-1', 'tool-s', ?, ?)`,
    [alice, tenantB],
  );
});
after(async () => {
  await app?.close();
});

const upload = (path: string, body: unknown, headers: Record<string, string> = KEY) =>
  api(app.url, 'POST', path, { body, headers });

const msg = (over: Record<string, unknown> = {}) => ({
  message_id: randomUUID(),
  role: 'assistant',
  content: 'hello',
  input_tokens: 10,
  output_tokens: 5,
  timestamp: '2026-03-01T10:15:00Z',
  ...over,
});

const countMessages = async (tool: string) =>
  Number(
    (await q<{ n: number }>('SELECT COUNT(*) AS n FROM daily_messages WHERE tool_name = ?', [tool]))[0]!.n,
  );

// ---- the recompute: every aggregate from daily_messages with GROUP BY ----

type Row = Record<string, unknown>;
const norm = (rows: Row[]) =>
  rows
    .map((r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [
          k,
          typeof v === 'string' && !/[^0-9]/.test(v) && v !== '' ? Number(v) : v,
        ]),
      ),
    )
    .map((r) => JSON.stringify(r))
    .sort();

const REQ = `SUM(CASE WHEN m.role = 'assistant' THEN 1 ELSE 0 END)`;
/** Every source of usage: messages (attributed to their user's tenant, else 1) and the usage reports of
 * days without messages (tokens only: domain/usage/counting.ts). */
const SOURCES = `(
  SELECT COALESCE(u.tenant_id, 1) AS tenant_id, m.date, m.tool_name, m.host_name, m.tokens_used, m.input_tokens,
         m.output_tokens, 0 AS cache_tokens, CASE WHEN m.role = 'assistant' THEN 1 ELSE 0 END AS requests, m.user_id
  FROM daily_messages m LEFT JOIN users u ON u.id = m.user_id
  UNION ALL
  SELECT r.tenant_id, r.date, r.tool_name, r.host_name, r.tokens_used, r.input_tokens, r.output_tokens,
         r.cache_tokens, 0, NULL FROM usage_uploads r
  WHERE NOT EXISTS (SELECT 1 FROM daily_messages d
                    WHERE d.date = r.date AND d.tool_name = r.tool_name AND d.host_name = r.host_name)) s`;

async function figures() {
  const messages = await q<{
    date: string;
    hour: number;
    tool_name: string;
    host_name: string;
    tokens_used: number;
    input_tokens: number;
    output_tokens: number;
    timestamp: unknown;
  }>(
    `SELECT date, tool_name, host_name, tokens_used, input_tokens, output_tokens, "timestamp" FROM daily_messages`,
  );
  const hourly = new Map<string, Row>();
  for (const m of messages) {
    const hour = m.timestamp == null ? 0 : new Date(m.timestamp as string | number).getUTCHours();
    const key = `${m.date}|${hour}|${m.tool_name}|${m.host_name}`;
    const h = hourly.get(key) ?? {
      date: m.date,
      hour,
      tool_name: m.tool_name,
      host_name: m.host_name,
      total_tokens: 0,
      total_input_tokens: 0,
      total_output_tokens: 0,
      message_count: 0,
    };
    (h.total_tokens as number) += Number(m.tokens_used);
    (h.total_input_tokens as number) += Number(m.input_tokens);
    (h.total_output_tokens as number) += Number(m.output_tokens);
    (h.message_count as number) += 1;
    hourly.set(key, h);
  }
  const recomputed = {
    daily_stats: await q(
      `SELECT m.date, m.tool_name, m.host_name, COALESCE(m.sender_name, '') AS sender_name,
              SUM(m.tokens_used) AS total_tokens, SUM(m.input_tokens) AS total_input_tokens,
              SUM(m.output_tokens) AS total_output_tokens, COUNT(*) AS message_count
       FROM daily_messages m GROUP BY m.date, m.tool_name, m.host_name, COALESCE(m.sender_name, '')`,
    ),
    hourly_stats: [...hourly.values()],
    daily_usage: await q(
      `SELECT s.tenant_id, s.date, s.tool_name, s.host_name, SUM(s.tokens_used) AS tokens_used,
              SUM(s.input_tokens) AS input_tokens, SUM(s.output_tokens) AS output_tokens,
              SUM(s.cache_tokens) AS cache_tokens, SUM(s.requests) AS request_count
       FROM ${SOURCES} GROUP BY s.tenant_id, s.date, s.tool_name, s.host_name`,
    ),
    usage_summary: await q(
      `SELECT s.tool_name, s.host_name, COUNT(DISTINCT s.date) AS days_count, SUM(s.tokens_used) AS total_tokens,
              SUM(s.requests) AS total_requests, SUM(s.input_tokens) AS total_input_tokens,
              SUM(s.output_tokens) AS total_output_tokens, MIN(s.date) AS first_date, MAX(s.date) AS last_date
       FROM ${SOURCES} GROUP BY s.tool_name, s.host_name`,
    ),
    user_daily_stats: await q(
      `SELECT m.user_id, m.date, ${REQ} AS requests, SUM(m.tokens_used) AS tokens,
              SUM(m.input_tokens) AS input_tokens, SUM(m.output_tokens) AS output_tokens
       FROM daily_messages m WHERE m.user_id IS NOT NULL GROUP BY m.user_id, m.date`,
    ),
    quota_usage: await q(
      `SELECT m.user_id, m.date, SUM(m.tokens_used) AS tokens_used, ${REQ} AS requests_used
       FROM daily_messages m WHERE m.user_id IS NOT NULL GROUP BY m.user_id, m.date`,
    ),
    tenant_usage: await q(
      `SELECT s.tenant_id, s.date, SUM(s.tokens_used) AS tokens_used, SUM(s.requests) AS requests_made,
              COUNT(DISTINCT s.user_id) AS active_users
       FROM ${SOURCES} GROUP BY s.tenant_id, s.date`,
    ),
    agent_sessions: await q(
      `SELECT s.session_id, COALESCE(SUM(m.tokens_used), 0) AS total_tokens,
              COALESCE(SUM(m.input_tokens), 0) AS total_input_tokens,
              COALESCE(SUM(m.output_tokens), 0) AS total_output_tokens, COUNT(m.id) AS message_count,
              COALESCE(${REQ}, 0) AS request_count
       FROM agent_sessions s LEFT JOIN daily_messages m ON m.agent_session_id = s.session_id
       GROUP BY s.session_id`,
    ),
    tenants: await q(
      `SELECT t.id, COALESCE(SUM(s.tokens_used), 0) AS total_tokens_used
       FROM tenants t LEFT JOIN ${SOURCES} ON s.tenant_id = t.id GROUP BY t.id`,
    ),
  };
  const stored = {
    daily_stats: await q(
      `SELECT date, tool_name, host_name, sender_name, total_tokens, total_input_tokens, total_output_tokens,
              message_count FROM daily_stats`,
    ),
    hourly_stats: await q(
      `SELECT date, hour, tool_name, host_name, total_tokens, total_input_tokens, total_output_tokens,
              message_count FROM hourly_stats`,
    ),
    daily_usage: await q(
      `SELECT tenant_id, date, tool_name, host_name, tokens_used, input_tokens, output_tokens, cache_tokens,
              request_count FROM daily_usage`,
    ),
    usage_summary: await q(
      `SELECT tool_name, host_name, days_count, total_tokens, total_requests, total_input_tokens,
              total_output_tokens, first_date, last_date FROM usage_summary`,
    ),
    user_daily_stats: await q(
      `SELECT user_id, date, requests, tokens, input_tokens, output_tokens FROM user_daily_stats`,
    ),
    quota_usage: await q(
      `SELECT user_id, date, tokens_used, requests_used FROM quota_usage WHERE period = 'daily'`,
    ),
    tenant_usage: await q(
      `SELECT tenant_id, date, tokens_used, requests_made, active_users FROM tenant_usage`,
    ),
    agent_sessions: await q(
      `SELECT session_id, total_tokens, total_input_tokens, total_output_tokens, message_count, request_count
       FROM agent_sessions`,
    ),
    tenants: await q(`SELECT id, total_tokens_used FROM tenants`),
  };
  const avg = await q<{ total_tokens: number; days_count: number; avg_tokens: number }>(
    'SELECT total_tokens, days_count, avg_tokens FROM usage_summary',
  );
  return { recomputed, stored, avg };
}

/**
 * Every figure, each table's rows sorted: a plain SELECT answers in the heap's order, which an update
 * that changes nothing can still change on PostgreSQL (the row gets a new version).
 */
async function sortedFigures() {
  const { recomputed, stored, avg } = await figures();
  const sorted = (tables: Record<string, Row[]>) =>
    Object.fromEntries(Object.entries(tables).map(([k, rows]) => [k, norm(rows)]));
  return { recomputed: sorted(recomputed), stored: sorted(stored), avg: norm(avg) };
}

/** Every aggregate table equals its recompute from daily_messages (and the usage reports). */
async function assertAggregatesMatchRecompute() {
  const { recomputed, stored, avg } = await figures();
  for (const table of Object.keys(recomputed) as Array<keyof typeof recomputed>)
    assert.deepEqual(norm(stored[table]), norm(recomputed[table]), `${table} equals its recompute`);
  for (const s of avg)
    assert.ok(
      Math.abs(Number(s.avg_tokens) - Number(s.total_tokens) / Number(s.days_count)) < 0.01,
      'avg_tokens',
    );
}

// ---- tests ----

test('X-Upload-Auth: 401 without it, 403 wrong, 503 when the server has no key', async () => {
  const body = { date: '2026-03-01', tool_name: 'tool-auth', messages: [msg()] };
  for (const path of ['/api/upload/usage', '/api/upload/messages', '/api/upload/batch']) {
    const none = await upload(path, body, {});
    assert.equal(none.status, 401);
    assert.match(none.body.error, /X-Upload-Auth/);
    const wrong = await upload(path, body, { 'x-upload-auth': 'test-upload-kez' });
    assert.equal(wrong.status, 403);
    const short = await upload(path, body, { 'x-upload-auth': 'x' });
    assert.equal(short.status, 403);
  }
  const saved = app.deps.settings.SVC_UPLOAD_AUTH_KEY;
  app.deps.settings.SVC_UPLOAD_AUTH_KEY = undefined;
  try {
    const off = await upload('/api/upload/messages', body);
    assert.equal(off.status, 503);
    assert.match(off.body.error, /SVC_UPLOAD_AUTH_KEY/);
  } finally {
    app.deps.settings.SVC_UPLOAD_AUTH_KEY = saved;
  }
  assert.equal(await countMessages('tool-auth'), 0, 'nothing stored by refused uploads');
});

test('a bad envelope is a 400 naming the field', async () => {
  const bad = await upload('/api/upload/messages', {
    date: '2026-02-30',
    tool_name: 'tool-env',
    messages: [msg()],
  });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^date:/);
  const noTool = await upload('/api/upload/messages', { date: '2026-03-01', messages: [msg()] });
  assert.equal(noTool.status, 400);
  assert.match(noTool.body.error, /^tool_name:/);
  const empty = await upload('/api/upload/batch', { messages: [] });
  assert.equal(empty.status, 400);
  assert.match(empty.body.error, /messages or usage rows are required/);
  const notList = await upload('/api/upload/batch', { usage: { date: '2026-03-01' } });
  assert.equal(notList.status, 400);
  assert.match(notList.body.error, /^usage:/);
  assert.equal(await countMessages('tool-env'), 0);
});

const BAD_ROWS = [
  { role: 'assistant', content: 'no id' },
  msg({ role: 'robot' }),
  msg({ input_tokens: -1 }),
  msg({ date: '2026-13-01' }),
  msg({ timestamp: 'yesterday' }),
  msg({ tokens_used: 1.5 }),
  'not an object',
];

test('no valid row: 400 with every row rejected by index, nothing stored', async () => {
  const r = await upload('/api/upload/messages', {
    date: '2026-03-01',
    tool_name: 'tool-bad',
    messages: BAD_ROWS,
  });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.stored, 0);
  assert.deepEqual(
    r.body.rejected.map((x: { index: number; field: string }) => [x.index, x.field]),
    [
      [0, 'message_id'],
      [1, 'role'],
      [2, 'input_tokens'],
      [3, 'date'],
      [4, 'timestamp'],
      [5, 'tokens_used'],
      [6, ''],
    ],
  );
  assert.equal(await countMessages('tool-bad'), 0);
});

test('some rows valid: 207 naming the stored rows; valid rows stored, invalid ones not', async () => {
  const good = [msg({ tool_name: 'tool-mixed' }), msg({ tool_name: 'tool-mixed', role: 'user' })];
  const body = { messages: [BAD_ROWS[0], good[0], BAD_ROWS[1], good[1], { ...msg(), tool_name: undefined }] };
  const r = await upload('/api/upload/batch', body);
  assert.equal(r.status, 207, JSON.stringify(r.body));
  assert.equal(r.body.success, false);
  assert.equal(r.body.messages.received, 5);
  assert.equal(r.body.messages.stored, 2);
  assert.deepEqual(r.body.messages.accepted, [1, 3]);
  assert.deepEqual(
    r.body.messages.rejected.map((x: { index: number; field: string }) => [x.index, x.field]),
    [
      [0, 'message_id'],
      [2, 'role'],
      [4, 'tool_name'],
    ],
  );
  assert.equal(await countMessages('tool-mixed'), 2);
  await assertAggregatesMatchRecompute();
});

test('attribution: tool account and username to the user and tenant; unknown senders to tenant 1', async () => {
  const tool = 'tool-attr';
  const r = await upload('/api/upload/messages', {
    date: '2026-03-02',
    tool_name: tool,
    host_name: 'ws-1',
    messages: [
      msg({ sender_id: 'alice@laptop', input_tokens: 100, output_tokens: 50, model: 'm-1' }),
      msg({ sender_name: 'bob', input_tokens: 7, output_tokens: 3, role: 'user' }),
      msg({ sender_name: 'stranger', input_tokens: 1, output_tokens: 1, model: 'm-2' }),
      msg({
        agent_session_id: 'sess-1',
        sender_id: 'alice@laptop',
        tokens_used: 40,
        input_tokens: 30,
        output_tokens: 10,
      }),
    ],
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual([r.body.stored, r.body.duplicates, r.body.rejected], [4, 0, []]);
  const users = await q<{ sender: string; user_id: number | null }>(
    `SELECT COALESCE(sender_id, sender_name) AS sender, user_id FROM daily_messages WHERE tool_name = ? ORDER BY id`,
    [tool],
  );
  assert.deepEqual(
    users.map((u) => [u.sender, u.user_id == null ? null : Number(u.user_id)]),
    [
      ['alice@laptop', alice],
      ['bob', bob],
      ['stranger', null],
      ['alice@laptop', alice],
    ],
  );
  const usage = await q<{
    tenant_id: number;
    tokens_used: number;
    request_count: number;
    models_used: string;
  }>(
    `SELECT tenant_id, tokens_used, request_count, models_used FROM daily_usage WHERE tool_name = ? ORDER BY tenant_id`,
    [tool],
  );
  assert.deepEqual(
    usage.map((u) => [Number(u.tenant_id), Number(u.tokens_used), Number(u.request_count), u.models_used]),
    [
      [1, 2, 1, 'm-2'],
      [tenantB, 150 + 10 + 40, 2, 'm-1'],
    ],
  );
  const [b] = await q<{ tokens_used: number; requests_made: number; active_users: number }>(
    `SELECT tokens_used, requests_made, active_users FROM tenant_usage WHERE tenant_id = ? AND date = '2026-03-02'`,
    [tenantB],
  );
  assert.deepEqual([Number(b!.tokens_used), Number(b!.requests_made), Number(b!.active_users)], [200, 2, 2]);
  const [s] = await q<{ total_tokens: number; message_count: number; request_count: number }>(
    `SELECT total_tokens, message_count, request_count FROM agent_sessions WHERE session_id = 'sess-1'`,
  );
  assert.deepEqual([Number(s!.total_tokens), Number(s!.message_count), Number(s!.request_count)], [40, 1, 1]);
  const [monthly] = await q<{ tokens_used: number; requests_used: number }>(
    `SELECT tokens_used, requests_used FROM quota_usage WHERE user_id = ? AND period = 'monthly' AND date = '2026-03-01'`,
    [alice],
  );
  assert.deepEqual([Number(monthly!.tokens_used), Number(monthly!.requests_used)], [190, 2]);
  await assertAggregatesMatchRecompute();
});

test('idempotent: uploading the same messages again changes no figure', async () => {
  const tool = 'tool-idem';
  const body = {
    date: '2026-03-03',
    tool_name: tool,
    messages: [
      msg({ sender_id: 'alice@laptop' }),
      msg({ role: 'user', timestamp: '2026-03-03T23:59:59.5+00:00' }),
      msg({ sender_name: 'nobody', timestamp: undefined }),
    ],
  };
  // The same message twice in one request counts once too.
  body.messages.push({ ...body.messages[0]! });
  const first = await upload('/api/upload/messages', body);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.deepEqual([first.body.stored, first.body.duplicates], [3, 1]);
  const before = await sortedFigures();
  const again = await upload('/api/upload/messages', body);
  assert.equal(again.status, 200);
  assert.deepEqual([again.body.stored, again.body.duplicates], [0, 4]);
  // The same rows through the batch endpoint (each row carrying its date and tool) are duplicates too.
  const viaBatch = await upload('/api/upload/batch', {
    messages: body.messages.map((m) => ({ ...m, date: body.date, tool_name: tool })),
  });
  assert.deepEqual([viaBatch.status, viaBatch.body.messages.stored], [200, 0]);
  assert.deepEqual(await sortedFigures(), before, 'no figure changed');
  await assertAggregatesMatchRecompute();
});

test('random uploads over days, tools, hosts and senders: aggregates equal the recompute', async () => {
  const senders = [{ sender_id: 'alice@laptop' }, { sender_name: 'bob' }, { sender_name: 'ghost' }, {}];
  const roles = ['user', 'assistant', 'system', 'assistant'];
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const all: Record<string, unknown>[] = [];
  for (let i = 0; i < 600; i++) {
    const day = `2026-04-${String(1 + rand(5)).padStart(2, '0')}`;
    all.push(
      msg({
        date: day,
        tool_name: `tool-r${rand(3)}`,
        host_name: `host-${rand(2)}`,
        role: roles[rand(4)],
        input_tokens: rand(1000),
        output_tokens: rand(500),
        model: `model-${rand(3)}`,
        timestamp: `${day}T${String(rand(24)).padStart(2, '0')}:00:00Z`,
        agent_session_id: rand(10) === 0 ? 'sess-1' : undefined,
        ...senders[rand(4)],
      }),
    );
  }
  // Overlapping uploads: every row is sent at least once, many twice.
  for (let i = 0; i < all.length; i += 150) {
    const r = await upload('/api/upload/batch', { messages: all.slice(Math.max(0, i - 75), i + 150) });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  await assertAggregatesMatchRecompute();
});

test('a 10,000-row batch is stored in chunks, all of it, and counted once', async () => {
  const tool = 'tool-big';
  const messages = Array.from({ length: 10_000 }, (_, i) =>
    msg({
      tool_name: tool,
      message_id: `big-${i}`,
      role: i % 2 ? 'assistant' : 'user',
      input_tokens: 3,
      output_tokens: 2,
    }),
  );
  const r = await upload('/api/upload/batch', { messages });
  assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
  assert.deepEqual(
    [r.body.messages.received, r.body.messages.stored, r.body.messages.duplicates],
    [10_000, 10_000, 0],
  );
  assert.equal(await countMessages(tool), 10_000);
  const [u] = await q<{ tokens_used: number; request_count: number }>(
    'SELECT SUM(tokens_used) AS tokens_used, SUM(request_count) AS request_count FROM daily_usage WHERE tool_name = ?',
    [tool],
  );
  assert.deepEqual([Number(u!.tokens_used), Number(u!.request_count)], [50_000, 5_000]);
  await assertAggregatesMatchRecompute();
});

test('usage reports: stored once, a repeat changes nothing, a newer report replaces the older one', async () => {
  const tool = 'tool-usage';
  const report = {
    date: '2026-03-05',
    tool_name: tool,
    host_name: 'build-1',
    tokens_used: '1200',
    input_tokens: 700,
    output_tokens: 500,
    cache_tokens: 40,
    request_count: 3,
    models_used: 'm-a,m-b',
  };
  const first = await upload('/api/upload/usage', report);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.deepEqual([first.body.stored, first.body.duplicates], [1, 0]);
  const before = await sortedFigures();
  const again = await upload('/api/upload/usage', report);
  assert.deepEqual([again.status, again.body.stored, again.body.duplicates], [200, 0, 1]);
  assert.deepEqual(await sortedFigures(), before, 'a repeated report changes no figure');
  await assertAggregatesMatchRecompute();

  const newer = await upload('/api/upload/usage', {
    ...report,
    tokens_used: 2000,
    request_count: 5,
    models_used: 'm-c',
  });
  assert.equal(newer.status, 200);
  const [u] = await q<{
    tokens_used: number;
    request_count: number;
    cache_tokens: number;
    models_used: string;
  }>('SELECT tokens_used, request_count, cache_tokens, models_used FROM daily_usage WHERE tool_name = ?', [
    tool,
  ]);
  assert.deepEqual(
    [Number(u!.tokens_used), Number(u!.request_count), Number(u!.cache_tokens), u!.models_used],
    [2000, 0, 40, 'm-a,m-b,m-c'],
    "a report's request_count is stored with the report, never counted as requests (rule 3)",
  );
  const [stored] = await q<{ request_count: number }>(
    'SELECT request_count FROM usage_uploads WHERE tool_name = ?',
    [tool],
  );
  assert.equal(Number(stored!.request_count), 5);
  await assertAggregatesMatchRecompute();

  for (const [bad, field] of [
    [{ ...report, tokens_used: -5 }, 'tokens_used'],
    [{ ...report, date: '03/05/2026' }, 'date'],
    [{ ...report, request_count: '12abc' }, 'request_count'],
    [{ ...report, tool_name: undefined }, 'tool_name'],
  ] as const) {
    const r = await upload('/api/upload/usage', bad);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.deepEqual([r.body.rejected[0].index, r.body.rejected[0].field], [0, field]);
  }
  await assertAggregatesMatchRecompute();
});

test('batch with usage and messages together: 207 per section when a usage row is bad', async () => {
  const r = await upload('/api/upload/batch', {
    messages: [msg({ tool_name: 'tool-both', date: '2026-03-06' })],
    usage: [
      { date: '2026-03-06', tool_name: 'tool-both', tokens_used: 10, request_count: 1 },
      { date: '2026-03-06', tool_name: 'tool-both', host_name: 'h2', output_tokens: -1 },
    ],
  });
  assert.equal(r.status, 207, JSON.stringify(r.body));
  assert.deepEqual([r.body.messages.stored, r.body.messages.rejected], [1, []]);
  assert.deepEqual([r.body.usage.stored, r.body.usage.accepted], [1, [0]]);
  assert.deepEqual(
    r.body.usage.rejected.map((x: { index: number; field: string }) => [x.index, x.field]),
    [[1, 'output_tokens']],
  );
  const [row] = await q<{ n: number }>(`SELECT COUNT(*) AS n FROM usage_uploads WHERE host_name = 'h2'`);
  assert.equal(Number(row!.n), 0, 'the invalid usage row is not stored');
  await assertAggregatesMatchRecompute();
});
