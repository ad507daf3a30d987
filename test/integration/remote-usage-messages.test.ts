// Remote work in the message tables (issue 10 item 1): a real remote session (machine registered over
// the API, scripted agent, session started through its workflow) calls the model proxy with the
// session's proxy token against the mock provider. Each answered call becomes exactly one assistant
// row of daily_messages with the session's tool, machine name, user and tenant and the call's tokens;
// a prompt sent through the chat API becomes one user row. The message-derived tables (daily_stats,
// hourly_stats, usage_summary, user_daily_stats, agent_sessions.message_count) grow by those rows,
// while daily_usage, tenant_usage, quota_usage, the session's token totals and
// tenants.total_tokens_used grow exactly once (by the settle), compared before/after to the token.
// Refused and failed calls leave no row. The rows are read inside their tenant only (GET
// /api/messages/count, /api/conversation-timeline). tenants.total_tokens_used is checked on every
// path that adds tokens: proxy settles, agent usage reports (counted or not), message uploads and
// usage uploads.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { invalidateCaches } from '../../db/invalidated-cache.ts';
import { ingestService } from '../../services/usage/ingest.ts';
import { proxiedCallRow, remoteMessagesFor } from '../../services/usage/remote-messages.ts';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type FakeMachine,
  person,
  type RemoteCast,
  registerFakeMachine,
  scriptedAgent,
  waitUntil,
} from '../support/remote.ts';
import { api, type Session } from '../support/session.ts';
import { proxyChat, proxyTokenOf, storeMockKey } from '../support/session-teardown.ts';

const CALL = MOCK_USAGE.openaiChat;
const UPLOAD_KEY = { 'x-upload-auth': 'test-upload-key' };

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
let machine: FakeMachine;
let machineName: string;
let sessionId: string;
let token: string;
let agent: ReturnType<typeof scriptedAgent>;

const q = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);
const n = (v: unknown) => Number(v ?? 0);
const today = () => app.clock.now().toISOString().slice(0, 10);
const flush = () => remoteMessagesFor(app.deps).flush();

before(async () => {
  app = await startTestApp({ worker: true });
  mock = await startMockProvider();
  cast = await buildRemoteCast(app);
  await storeMockKey(app, cast.admin.session, cast.tenantId, mock);
  machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, machine);
  agent = scriptedAgent(app.url, machine);
  const [m] = await q<{ machine_name: string }>(
    'SELECT machine_name FROM remote_machines WHERE machine_id = ?',
    [machine.machineId],
  );
  machineName = m!.machine_name;
  assert.equal(
    (await assign(app.url, cast.admin.session, machine.machineId, cast.userA.id, 'user')).status,
    200,
  );
  const r = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machine.machineId, project_path: '/tmp', cli_tool: 'cli_alpha' },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  sessionId = r.body.session_id;
  token = await proxyTokenOf(app, sessionId);
  // The agent claimed the start command (usage reports need a started session).
  await waitUntil('start claimed', async () =>
    agent.received.some((c) => c.command_type === 'session.start' && c.session_id === sessionId),
  );
});
after(async () => {
  await agent?.stop();
  await mock?.close();
  await app?.close();
});

/** Every figure the proxy's settle and the message rows may touch, for the session's user, tenant, tool and host. */
async function figures() {
  await flush();
  const day = today();
  const [du] = await q(
    `SELECT COALESCE(SUM(tokens_used), 0) AS tokens, COALESCE(SUM(request_count), 0) AS requests
     FROM daily_usage WHERE tenant_id = ? AND date = ? AND tool_name = 'cli_alpha' AND host_name = ?`,
    [cast.tenantId, day, machineName],
  );
  const [tu] = await q(
    'SELECT COALESCE(SUM(tokens_used), 0) AS tokens, COALESCE(SUM(requests_made), 0) AS requests FROM tenant_usage WHERE tenant_id = ? AND date = ?',
    [cast.tenantId, day],
  );
  const quota = await q<{ period: string; tokens_used: unknown; requests_used: unknown }>(
    'SELECT period, tokens_used, requests_used FROM quota_usage WHERE user_id = ?',
    [cast.userA.id],
  );
  const [s] = await q(
    'SELECT total_tokens, total_input_tokens, total_output_tokens, request_count, message_count FROM agent_sessions WHERE session_id = ?',
    [sessionId],
  );
  const [tenant] = await q('SELECT total_tokens_used FROM tenants WHERE id = ?', [cast.tenantId]);
  const [ds] = await q(
    `SELECT COALESCE(SUM(total_tokens), 0) AS tokens, COALESCE(SUM(message_count), 0) AS messages
     FROM daily_stats WHERE date = ? AND tool_name = 'cli_alpha' AND host_name = ?`,
    [day, machineName],
  );
  const [hs] = await q(
    `SELECT COALESCE(SUM(total_tokens), 0) AS tokens, COALESCE(SUM(message_count), 0) AS messages
     FROM hourly_stats WHERE date = ? AND tool_name = 'cli_alpha' AND host_name = ?`,
    [day, machineName],
  );
  const [us] = await q(
    `SELECT total_tokens, total_requests FROM usage_summary WHERE tool_name = 'cli_alpha' AND host_name = ?`,
    [machineName],
  );
  const [uds] = await q('SELECT requests, tokens FROM user_daily_stats WHERE user_id = ? AND date = ?', [
    cast.userA.id,
    day,
  ]);
  const quotaOf = (period: string) => quota.find((r) => r.period === period);
  return {
    dailyUsage: { tokens: n(du!.tokens), requests: n(du!.requests) },
    tenantUsage: { tokens: n(tu!.tokens), requests: n(tu!.requests) },
    quotaDaily: { tokens: n(quotaOf('daily')?.tokens_used), requests: n(quotaOf('daily')?.requests_used) },
    quotaMonthly: {
      tokens: n(quotaOf('monthly')?.tokens_used),
      requests: n(quotaOf('monthly')?.requests_used),
    },
    session: {
      tokens: n(s!.total_tokens),
      input: n(s!.total_input_tokens),
      output: n(s!.total_output_tokens),
      requests: n(s!.request_count),
      messages: n(s!.message_count),
    },
    tenantTotal: n(tenant!.total_tokens_used),
    dailyStats: { tokens: n(ds!.tokens), messages: n(ds!.messages) },
    hourlyStats: { tokens: n(hs!.tokens), messages: n(hs!.messages) },
    usageSummary: { tokens: n(us?.total_tokens), requests: n(us?.total_requests) },
    userDaily: { tokens: n(uds?.tokens), requests: n(uds?.requests) },
  };
}

type Figures = Awaited<ReturnType<typeof figures>>;

/** after - before, figure by figure. */
function difference(a: Figures, b: Figures): Figures {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) {
    const before = (a as Record<string, unknown>)[k];
    out[k] =
      typeof v === 'number'
        ? v - (before as number)
        : Object.fromEntries(
            Object.entries(v as Record<string, number>).map(([f, x]) => [
              f,
              x - (before as Record<string, number>)[f]!,
            ]),
          );
  }
  return out as Figures;
}

const assistantRows = () =>
  q<Record<string, unknown>>(
    "SELECT * FROM daily_messages WHERE agent_session_id = ? AND role = 'assistant' ORDER BY id",
    [sessionId],
  );

/** Waits for the session's assistant rows to reach `count` (the proxy queues them after answering). */
async function assistantRowsReach(count: number) {
  return waitUntil(`${count} assistant rows`, async () => {
    await flush();
    const rows = await assistantRows();
    return rows.length >= count ? rows : undefined;
  });
}

test('each answered proxied call is one assistant row; settled figures are not counted twice', async () => {
  const start = (await assistantRows()).length;
  const before = await figures();
  for (let i = 0; i < 2; i++) assert.equal((await proxyChat(app, token)).status, 200);
  const rows = await assistantRowsReach(start + 2);
  assert.equal(rows.length, start + 2, 'exactly one row per call');
  const fresh = rows.slice(start);
  assert.notEqual(fresh[0]!.message_id, fresh[1]!.message_id);
  for (const row of fresh) {
    assert.equal(row.role, 'assistant');
    assert.equal(row.tool_name, 'cli_alpha', 'tool = the CLI tool id');
    assert.equal(row.host_name, machineName, 'host = the machine name');
    assert.equal(n(row.user_id), cast.userA.id);
    assert.equal(n(row.tenant_id), cast.tenantId);
    assert.equal(row.agent_session_id, sessionId);
    assert.equal(row.message_source, 'proxy');
    assert.equal(row.date, today());
    assert.equal(row.model, 'gpt-test');
    assert.equal(n(row.input_tokens), CALL.prompt_tokens);
    assert.equal(n(row.output_tokens), CALL.completion_tokens);
    assert.equal(n(row.tokens_used), CALL.total_tokens);
    assert.ok(row.timestamp, 'timestamp set');
  }

  const d = difference(before, await figures());
  const tokens = 2 * CALL.total_tokens;
  // Counted once, by the settle.
  assert.deepEqual(d.dailyUsage, { tokens, requests: 2 });
  assert.deepEqual(d.tenantUsage, { tokens, requests: 2 });
  assert.deepEqual(d.quotaDaily, { tokens, requests: 2 });
  assert.deepEqual(d.quotaMonthly, { tokens, requests: 2 });
  assert.equal(d.tenantTotal, tokens);
  assert.deepEqual(d.session, {
    tokens,
    input: 2 * CALL.prompt_tokens,
    output: 2 * CALL.completion_tokens,
    requests: 2,
    messages: 2,
  });
  // Derived from the two message rows.
  assert.deepEqual(d.dailyStats, { tokens, messages: 2 });
  assert.deepEqual(d.hourlyStats, { tokens, messages: 2 });
  assert.deepEqual(d.usageSummary, { tokens, requests: 2 });
  assert.deepEqual(d.userDaily, { tokens, requests: 2 });
});

test('a retried flush cannot double a row', async () => {
  const start = (await assistantRows()).length;
  assert.equal((await proxyChat(app, token)).status, 200);
  const rows = await assistantRowsReach(start + 1);
  const before = await figures();
  // The same row again, through the same ingestion path and option the queue uses.
  const last = rows[rows.length - 1]!;
  const again = await ingestService(app.deps).ingestMessages(
    [
      proxiedCallRow(
        {
          sessionId,
          userId: cast.userA.id,
          tenantId: cast.tenantId,
          toolName: 'cli_alpha',
          hostName: machineName,
          username: null,
          requestId: 'r',
          day: String(last.date),
          at: app.clock.now(),
          usage: null,
          provider: 'openai',
          endpoint: 'x',
        },
        String(last.message_id),
      ),
    ],
    { accounting: 'already-settled' },
  );
  assert.deepEqual(again, { inserted: 0, duplicates: 1 });
  assert.deepEqual(await figures(), before, 'nothing changed');
});

test('refused and failed calls produce no row', async () => {
  const start = (await assistantRows()).length;
  const before = await figures();
  // The provider answers with an error: passed through, counted nowhere.
  mock.setBehaviour({ errorStatus: 500 });
  try {
    assert.equal((await proxyChat(app, token)).status, 500);
  } finally {
    mock.setBehaviour({ errorStatus: undefined });
  }
  // Refused by the proxy itself: a forged token.
  assert.equal((await proxyChat(app, `${token}x`)).status, 401);
  // Refused for quota: the user's daily request quota is used up. Written with raw SQL, so it sends
  // the push the admin API sends (README "Quota leases": without it the lease this instance holds,
  // on by default, would serve up to SVC_QUOTA_LEASE_REQUESTS more calls for up to 2 s).
  await q('UPDATE users SET daily_request_quota = ? WHERE id = ?', [0, cast.userA.id]);
  await invalidateCaches(app.database, { userId: cast.userA.id });
  try {
    assert.equal((await proxyChat(app, token)).status, 429);
  } finally {
    await q('UPDATE users SET daily_request_quota = NULL WHERE id = ?', [cast.userA.id]);
  }
  // A call answered afterwards: once its row is there, any row of the calls before would be too.
  assert.equal((await proxyChat(app, token)).status, 200);
  const rows = await assistantRowsReach(start + 1);
  assert.equal(rows.length, start + 1, 'only the answered call has a row');
  const d = difference(before, await figures());
  assert.deepEqual(d.dailyUsage, { tokens: CALL.total_tokens, requests: 1 });
  assert.deepEqual(d.dailyStats, { tokens: CALL.total_tokens, messages: 1 });
});

/** Makes every insert of a proxied call's row fail (a database refusing the message write). */
async function failProxyRows(on: boolean) {
  const pg = app.database.dialect === 'postgres';
  if (on && pg) {
    await app.database.sql.exec(`
      CREATE FUNCTION test_fail_proxy_rows() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER test_fail_proxy_rows BEFORE INSERT ON daily_messages FOR EACH ROW
        WHEN (NEW.message_source = 'proxy') EXECUTE FUNCTION test_fail_proxy_rows();`);
  } else if (on) {
    await app.database.sql.exec(`
      CREATE TRIGGER test_fail_proxy_rows BEFORE INSERT ON daily_messages
      WHEN NEW.message_source = 'proxy' BEGIN SELECT RAISE(ABORT, 'injected failure'); END;`);
  } else if (pg) {
    await app.database.sql.exec(
      'DROP TRIGGER test_fail_proxy_rows ON daily_messages; DROP FUNCTION test_fail_proxy_rows();',
    );
  } else await app.database.sql.exec('DROP TRIGGER test_fail_proxy_rows;');
}

test('a failed message write loses nothing of the quota accounting and is retried', async () => {
  const start = (await assistantRows()).length;
  const before = await figures();
  await failProxyRows(true);
  let whileFailing: Figures;
  try {
    assert.equal((await proxyChat(app, token)).status, 200);
    // The settle is written, the message row is refused.
    whileFailing = await waitUntil('the settle', async () => {
      const f = await figures();
      return f.dailyUsage.requests > before.dailyUsage.requests ? f : undefined;
    });
  } finally {
    await failProxyRows(false);
  }
  assert.equal((await assistantRows()).length, start, 'no row while the write fails');
  const d = difference(before, whileFailing);
  assert.deepEqual(d.dailyUsage, { tokens: CALL.total_tokens, requests: 1 });
  assert.deepEqual(d.quotaDaily, { tokens: CALL.total_tokens, requests: 1 });
  assert.deepEqual(d.dailyStats, { tokens: 0, messages: 0 });
  // The queue kept the row: the next flush stores it, and counts nothing of the settle again.
  const rows = await assistantRowsReach(start + 1);
  assert.equal(rows.length, start + 1);
  const after = difference(before, await figures());
  assert.deepEqual(after.dailyUsage, { tokens: CALL.total_tokens, requests: 1 });
  assert.deepEqual(after.dailyStats, { tokens: CALL.total_tokens, messages: 1 });
  assert.ok(
    app.logs.some((l) => l.includes('writing message rows failed')),
    'the failure is logged',
  );
});

test('a prompt sent to the session is one user row with its text', async () => {
  const before = await figures();
  const content = `please refactor ${randomUUID()}`;
  const r = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // Written before the chat answered.
  const rows = await q<Record<string, unknown>>(
    "SELECT * FROM daily_messages WHERE agent_session_id = ? AND role = 'user'",
    [sessionId],
  );
  const row = rows.find((x) => x.message_id === r.body.command_id);
  assert.ok(row, 'the prompt row, keyed by its command id');
  assert.equal(row.content, content);
  assert.equal(row.message_source, 'remote');
  assert.equal(row.tool_name, 'cli_alpha');
  assert.equal(row.host_name, machineName);
  assert.equal(n(row.user_id), cast.userA.id);
  assert.equal(n(row.tenant_id), cast.tenantId);
  assert.equal(n(row.tokens_used), 0);
  const d = difference(before, await figures());
  assert.equal(d.session.messages, 1, 'the session counts the prompt once');
  assert.deepEqual(d.dailyStats, { tokens: 0, messages: 1 });
  assert.deepEqual(d.userDaily, { tokens: 0, requests: 0 }, 'a prompt is not a request');
  assert.deepEqual(d.dailyUsage, { tokens: 0, requests: 0 });
  assert.equal(d.tenantTotal, 0);
});

test("tenant scope: the session's rows are read in its tenant, never from another", async () => {
  const otherTenant = await createTenant(app, cast.admin.session);
  const outsider = await person(app, cast.admin.session, 'user', otherTenant);
  const count = async (who: Session) => {
    const r = await api(app.url, 'GET', `/api/messages/count?host=${encodeURIComponent(machineName)}`, {
      auth: who,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.count as number;
  };
  await flush();
  const [stored] = await q('SELECT COUNT(*) AS n FROM daily_messages WHERE host_name = ?', [machineName]);
  assert.ok(n(stored!.n) >= 4, 'proxied calls and a prompt are stored');
  assert.equal(await count(cast.userA.session), n(stored!.n), 'the tenant sees every row');
  assert.equal(await count(cast.admin.session), n(stored!.n), 'a system admin sees every row');
  assert.equal(await count(outsider.session), 0, 'another tenant sees none');
  const timeline = await api(app.url, 'GET', `/api/conversation-timeline/${sessionId}`, {
    auth: outsider.session,
  });
  assert.equal(timeline.status, 404);
});

// ---- tenants.total_tokens_used on every path that adds tokens ----

const tenantTotal = async (id: number) =>
  n((await q('SELECT total_tokens_used FROM tenants WHERE id = ?', [id]))[0]!.total_tokens_used);

const usageReport = (body: Record<string, unknown>) =>
  fetch(`${app.url}/api/remote/usage-report`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...machine.headers },
    body: JSON.stringify({ session_id: sessionId, ...body }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

test('total_tokens_used: agent usage reports add once when counted, never when via the proxy', async () => {
  const before = await tenantTotal(cast.tenantId);
  const counted = await usageReport({
    report_id: randomUUID(),
    input_tokens: 100,
    output_tokens: 23,
    via_proxy: false,
  });
  assert.equal(counted.status, 201, JSON.stringify(counted.body));
  assert.equal(counted.body.counted, true);
  const kept = await usageReport({ report_id: randomUUID(), input_tokens: 1000, output_tokens: 1 });
  assert.equal(kept.status, 201);
  assert.equal(kept.body.counted, false);
  await flush();
  assert.equal(await tenantTotal(cast.tenantId), before + 123);
});

test('total_tokens_used: message uploads add to the sender tenant once; a repeat adds nothing', async () => {
  const before = await tenantTotal(cast.tenantId);
  const [user] = await q<{ username: string }>('SELECT username FROM users WHERE id = ?', [cast.userB.id]);
  const body = {
    date: today(),
    tool_name: 'tool-upload-total',
    messages: [
      {
        message_id: randomUUID(),
        role: 'assistant',
        input_tokens: 40,
        output_tokens: 2,
        sender_name: user!.username,
      },
      {
        message_id: randomUUID(),
        role: 'user',
        input_tokens: 5,
        output_tokens: 0,
        sender_name: user!.username,
      },
    ],
  };
  for (let i = 0; i < 2; i++) {
    const r = await api(app.url, 'POST', '/api/upload/messages', { body, headers: UPLOAD_KEY });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  assert.equal(await tenantTotal(cast.tenantId), before + 47);
});

test('total_tokens_used: usage uploads add their difference to tenant 1', async () => {
  const before = await tenantTotal(1);
  const report = { date: today(), tool_name: `tool-usage-${randomUUID().slice(0, 8)}`, tokens_used: 500 };
  const send = (b: Record<string, unknown>) =>
    api(app.url, 'POST', '/api/upload/usage', { body: b, headers: UPLOAD_KEY });
  assert.equal((await send(report)).status, 200);
  assert.equal((await send(report)).status, 200);
  assert.equal(await tenantTotal(1), before + 500, 'the same report again adds nothing');
  assert.equal((await send({ ...report, tokens_used: 800 })).status, 200);
  assert.equal(await tenantTotal(1), before + 800, 'a newer report adds its difference');
});
