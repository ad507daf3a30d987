// A graceful shutdown loses no usage (bin/runtime.ts listen().close() -> flushUsageAtShutdown in
// services/usage/remote-messages.ts). Proxied calls go through the real model proxy against the local
// mock provider and the app is closed the moment the last answer arrives, well before the quota
// service's report timer (50 ms) or the message queue's (100 ms) would have written anything. The
// database is then opened again: every call's assistant row of daily_messages, its daily_usage row,
// the session's totals, tenants.total_tokens_used and quota_usage (nothing left reserved) are there.
// What a shutdown cannot write is logged as counts only, after the quota rows were written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { after, test } from 'node:test';
import { type DatabaseHandle, openDatabase } from '../../db/client.ts';
import { dayKey } from '../../domain/quota.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant } from '../support/actors.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { ADMIN, startTestApp, type TestApp, temporalAddress } from '../support/harness.ts';
import { login } from '../support/session.ts';
import { proxyChat, storeMockKey } from '../support/session-teardown.ts';

const CALL = MOCK_USAGE.openaiChat;
const HOST = 'machine-shutdown-test';
const n = (v: unknown) => Number(v ?? 0);

let mock: MockProvider | undefined;
const cleanup: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  await mock?.close();
});

interface Setup {
  app: TestApp;
  testDb: TestDatabase;
  tenantId: number;
  userId: number;
  sessionId: string;
  token: string;
}

/** An app on a database that outlives it, a tenant with a key at the mock provider, a session and its token. */
async function setUp(): Promise<Setup> {
  mock ??= await startMockProvider();
  const testDb = await createTestDatabase();
  cleanup.push(() => testDb.drop());
  const app = await startTestApp({ testDb });
  let closed = false;
  const close = app.close.bind(app);
  app.close = async () => {
    if (closed) return;
    closed = true;
    await close();
  };
  cleanup.push(() => app.close());
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const tenantId = await createTenant(app, admin);
  await storeMockKey(app, admin, tenantId, mock);
  const { db, t } = app.database;
  const [user] = await db
    .insert(t.users)
    .values({ username: `shutdown-${randomUUID().slice(0, 8)}`, passwordHash: 'x', role: 'user', tenantId })
    .returning({ id: t.users.id });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId,
    toolName: 'cli_alpha',
    hostName: HOST,
    userId: user!.id,
    status: 'active',
    workspaceType: 'remote',
    remoteMachineId: HOST,
  });
  const tokens = proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });
  const { token } = await tokens.issue({ sessionId, userId: user!.id, tenantId, provider: 'openai' });
  return { app, testDb, tenantId, userId: user!.id, sessionId, token };
}

/** The database of a closed app, opened again. */
async function reopen(s: Setup): Promise<DatabaseHandle> {
  const database = await openDatabase({
    databaseUrl: s.testDb.databaseUrl ?? '',
    sqlitePath: s.testDb.sqlitePath,
  });
  cleanup.push(() => database.close());
  return database;
}

/** Every figure the calls of the session must have left, read from a fresh handle. */
async function stored(database: DatabaseHandle, s: Setup) {
  const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    database.sql.query<T>(text, params);
  const day = dayKey(new Date());
  const [messages] = await q(
    `SELECT COUNT(*) AS rows, COALESCE(SUM(tokens_used), 0) AS tokens FROM daily_messages
     WHERE agent_session_id = ? AND role = 'assistant'`,
    [s.sessionId],
  );
  const [du] = await q(
    `SELECT COALESCE(SUM(tokens_used), 0) AS tokens, COALESCE(SUM(request_count), 0) AS requests
     FROM daily_usage WHERE tenant_id = ? AND date = ? AND tool_name = 'cli_alpha' AND host_name = ?`,
    [s.tenantId, day, HOST],
  );
  const [session] = await q('SELECT total_tokens, request_count FROM agent_sessions WHERE session_id = ?', [
    s.sessionId,
  ]);
  const [tenant] = await q('SELECT total_tokens_used FROM tenants WHERE id = ?', [s.tenantId]);
  const [quota] = await q(
    `SELECT tokens_used, requests_used, tokens_reserved, requests_reserved FROM quota_usage
     WHERE user_id = ? AND period = 'daily'`,
    [s.userId],
  );
  return {
    messageRows: n(messages!.rows),
    messageTokens: n(messages!.tokens),
    dailyUsage: { tokens: n(du!.tokens), requests: n(du!.requests) },
    session: { tokens: n(session!.total_tokens), requests: n(session!.request_count) },
    tenantTokens: n(tenant!.total_tokens_used),
    quota: {
      tokens: n(quota?.tokens_used),
      requests: n(quota?.requests_used),
      reservedTokens: n(quota?.tokens_reserved),
      reservedRequests: n(quota?.requests_reserved),
    },
  };
}

test('usage of proxied calls answered just before close is all written before the database closes', async () => {
  const s = await setUp();
  const calls = 24;
  const answers = await Promise.all(Array.from({ length: calls }, () => proxyChat(s.app, s.token)));
  for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
  // At once: neither the 50 ms report timer nor the 100 ms message timer has fired.
  await s.app.close();

  const database = await reopen(s);
  const got = await stored(database, s);
  assert.deepEqual(got, {
    messageRows: calls,
    messageTokens: calls * CALL.total_tokens,
    dailyUsage: { tokens: calls * CALL.total_tokens, requests: calls },
    session: { tokens: calls * CALL.total_tokens, requests: calls },
    tenantTokens: calls * CALL.total_tokens,
    quota: { tokens: calls * CALL.total_tokens, requests: calls, reservedTokens: 0, reservedRequests: 0 },
  });
  const logs = s.app.logs.join('\n');
  assert.doesNotMatch(logs, /usage not written/);
  assert.doesNotMatch(logs, /sk-real-teardown-test-key/, 'the provider key is never logged');
});

test('a call in flight when close starts is counted; a call arriving after it is refused with 503', async () => {
  const s = await setUp();
  const before = mock!.requests.length;
  const { port } = new URL(s.app.url);
  const chat = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
  const head =
    `POST /api/remote/llm-proxy/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
    `authorization: Bearer ${s.token}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(chat)}\r\n\r\n`;
  const socket = connect(Number(port), '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  // Call A: its head and half its body, so it is in flight when the close starts...
  socket.write(head + chat.slice(0, 10));
  await new Promise((r) => setTimeout(r, 200));
  const closing = s.app.close();
  // ...then the rest of A and, pipelined on the same connection, call B: it arrives after the close began.
  socket.write(chat.slice(10) + head + chat);
  await ended;
  await closing;
  const text = Buffer.concat(chunks).toString('utf8');
  const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  assert.deepEqual(statuses, [200, 503], text);
  assert.match(text, /The server is shutting down/);
  assert.equal(mock!.requests.length, before + 1, 'only the call in flight reached the provider');
  const got = await stored(await reopen(s), s);
  assert.equal(got.messageRows, 1, 'the call in flight is written, the refused one is not');
  assert.deepEqual(got.dailyUsage, { tokens: CALL.total_tokens, requests: 1 });
  assert.deepEqual(got.quota, {
    tokens: CALL.total_tokens,
    requests: 1,
    reservedTokens: 0,
    reservedRequests: 0,
  });
});

test('rows a shutdown cannot write are logged as counts, after the quota rows were written', async () => {
  const s = await setUp();
  // The message table is gone: the quota service's rows can be written, the message rows cannot.
  await s.app.database.sql.query('ALTER TABLE daily_messages RENAME TO daily_messages_away', []);
  const calls = 3;
  for (let i = 0; i < calls; i++) assert.equal((await proxyChat(s.app, s.token)).status, 200);
  await s.app.close();

  const line = s.app.logs.find((l) => l.includes('usage not written'));
  assert.ok(line, 'the unwritten rows are logged');
  const entry = JSON.parse(line);
  assert.equal(entry.message_rows, calls);
  assert.equal(entry.settles, 0);
  assert.equal(entry.report_rows, 0);
  assert.doesNotMatch(line, /sk-real|Bearer|authorization/i, 'counts only');

  const database = await reopen(s);
  await database.sql.query('ALTER TABLE daily_messages_away RENAME TO daily_messages', []);
  const got = await stored(database, s);
  assert.equal(got.messageRows, 0);
  assert.deepEqual(got.dailyUsage, { tokens: calls * CALL.total_tokens, requests: calls });
  assert.deepEqual(got.session, { tokens: calls * CALL.total_tokens, requests: calls });
  assert.equal(got.quota.reservedRequests, 0);
});

test('SIGTERM to `npm run api` writes the usage of the calls answered just before', async () => {
  const s = await setUp();
  // The in-process app only prepared the tenant, key, session and token; the API under test is bin/api.ts.
  await s.app.close();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/api.ts'], {
    env: {
      ...process.env,
      SVC_DATA_DIR: s.testDb.dataDir,
      DATABASE_URL: s.testDb.databaseUrl ?? '',
      TEMPORAL_ADDRESS: temporalAddress(),
      TEMPORAL_TASK_QUEUE: `shutdown-${randomBytes(4).toString('hex')}`,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // The harness's keys: the stored provider key and the proxy token were made with them.
      SVC_ENCRYPTION_KEY: s.app.settings.SVC_ENCRYPTION_KEY!,
      SECRET_KEY: s.app.settings.SECRET_KEY!,
      SVC_UPLOAD_AUTH_KEY: 'test-upload-key',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanup.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (!/API listening on/.test(out)) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `the API did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = out.match(/API listening on (\S+)/)![1]!;
  const calls = 12;
  const answers = await Promise.all(
    Array.from({ length: calls }, () =>
      fetch(`${url}/api/remote/llm-proxy/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
      }).then(async (r) => ({ status: r.status, body: await r.text() })),
    ),
  );
  for (const a of answers) assert.equal(a.status, 200, a.body);
  child.kill('SIGTERM');
  assert.equal(await exited, 0, out);
  assert.match(out, /SIGTERM received, shutting down[\s\S]*stopped/);
  assert.doesNotMatch(out, /usage not written/);

  const got = await stored(await reopen(s), s);
  assert.deepEqual(got, {
    messageRows: calls,
    messageTokens: calls * CALL.total_tokens,
    dailyUsage: { tokens: calls * CALL.total_tokens, requests: calls },
    session: { tokens: calls * CALL.total_tokens, requests: calls },
    tenantTokens: calls * CALL.total_tokens,
    quota: { tokens: calls * CALL.total_tokens, requests: calls, reservedTokens: 0, reservedRequests: 0 },
  });
});
