// The message rows of proxied calls written by a worker thread on PostgreSQL (issue 16 item 4;
// services/usage/message-writer-thread.ts), on this thread on SQLite. Against the real database of
// the run: the rows of queued calls are all stored once and the session's message_count grows by
// exactly their number; a batch the database refuses is logged, stays queued and is not half-written;
// after the shutdown flush the thread is ended and its connections are gone, and a later flush
// writes on the API's thread; with SVC_USAGE_WRITER_THREAD=off no thread is started.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { invalidatedCache, sqliteCachesFresh } from '../../db/invalidated-cache.ts';
import {
  flushUsageAtShutdown,
  type ProxiedCall,
  remoteMessages,
  remoteMessagesFor,
} from '../../services/usage/remote-messages.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { waitUntil } from '../support/remote.ts';

let app: TestApp;
let pg: boolean;
let tenantId: number;
let userId: number;

const q = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  app.database.sql.query<T>(text, params);

before(async () => {
  app = await startTestApp();
  pg = app.database.dialect === 'postgres';
  const tag = `wt-${randomUUID().slice(0, 8)}`;
  await q('INSERT INTO tenants (name) VALUES (?)', [tag]);
  [{ id: tenantId }] = (await q<{ id: number }>('SELECT id FROM tenants WHERE name = ?', [tag])) as [
    { id: number },
  ];
  await q('INSERT INTO users (username, password_hash, tenant_id) VALUES (?, ?, ?)', [tag, 'x', tenantId]);
  [{ id: userId }] = (await q<{ id: number }>('SELECT id FROM users WHERE username = ?', [tag])) as [
    { id: number },
  ];
  tenantId = Number(tenantId);
  userId = Number(userId);
});
after(async () => {
  await app?.close();
});

async function newSession(): Promise<string> {
  const sessionId = `wt-${randomUUID()}`;
  await q(
    'INSERT INTO agent_sessions (session_id, tenant_id, tool_name, host_name, user_id) VALUES (?, ?, ?, ?, ?)',
    [sessionId, tenantId, 'cli_alpha', 'wt-host', userId],
  );
  return sessionId;
}

function call(sessionId: string, i: number, totalTokens = 42): ProxiedCall {
  return {
    sessionId,
    userId,
    tenantId,
    toolName: 'cli_alpha',
    hostName: 'wt-host',
    projectPath: '/tmp/p',
    requestId: `r-${i}`,
    username: 'wt',
    day: app.clock.now().toISOString().slice(0, 10),
    at: app.clock.now(),
    usage: {
      inputTokens: 12,
      outputTokens: totalTokens - 12,
      totalTokens,
      model: 'm',
      estimated: false,
    } as never,
    provider: 'openai',
    endpoint: '/v1/chat/completions',
  };
}

async function stored(sessionId: string) {
  const [r] = await q<{ n: unknown; tokens: unknown; m: unknown }>(
    `SELECT COUNT(*) AS n, COALESCE(SUM(tokens_used), 0) AS tokens,
            (SELECT message_count FROM agent_sessions WHERE session_id = ?) AS m
     FROM daily_messages WHERE agent_session_id = ?`,
    [sessionId, sessionId],
  );
  return { rows: Number(r!.n), tokens: Number(r!.tokens), messageCount: Number(r!.m) };
}

/** Backends of the writer thread's pool (application_name set by message-writer-worker.ts). */
const writerConnections = async (): Promise<number> => {
  if (!pg) return 0;
  const [r] = await q<{ n: unknown }>(
    'SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?',
    ['svc-usage-writer'],
  );
  return Number(r!.n);
};

test('queued rows are all stored once; on PostgreSQL by the writer thread, on SQLite on this thread', async () => {
  const messages = remoteMessagesFor(app.deps);
  const sessionId = await newSession();
  for (let i = 0; i < 1_250; i++) messages.recordProxiedCall(call(sessionId, i));
  await messages.flush();
  assert.equal(messages.writesOnThread(), pg);
  if (pg) assert.ok((await writerConnections()) >= 1, 'the thread writes on its own connection');
  assert.equal(messages.pending(), 0);
  assert.deepEqual(await stored(sessionId), { rows: 1_250, tokens: 1_250 * 42, messageCount: 1_250 });
  // A second flush with nothing queued changes nothing.
  await messages.flush();
  assert.deepEqual(await stored(sessionId), { rows: 1_250, tokens: 1_250 * 42, messageCount: 1_250 });
});

test('a batch the database refuses is logged, stays queued and writes none of its rows', async (t) => {
  if (!pg) {
    t.skip('SQLite stores any integer: the refusal is PostgreSQL bigint range');
    return;
  }
  const logs: string[] = [];
  const logger = app.deps.logger.child({});
  const messages = remoteMessages({
    ...app.deps,
    logger: Object.assign(Object.create(logger), {
      error: (obj: unknown, msg: string) => logs.push(`${msg} ${JSON.stringify(obj)}`),
    }),
  });
  const sessionId = await newSession();
  messages.recordProxiedCall(call(sessionId, 0));
  messages.recordProxiedCall(call(sessionId, 1, 2 ** 70)); // out of bigint's range
  messages.recordProxiedCall(call(sessionId, 2));
  await messages.flush();
  assert.equal(messages.writesOnThread(), true);
  assert.equal(messages.pending(), 3);
  assert.ok(
    logs.some((l) => l.includes('writing message rows failed; will retry') && l.includes('"rows":3')),
    logs.join('\n'),
  );
  assert.deepEqual(await stored(sessionId), { rows: 0, tokens: 0, messageCount: 0 });
  messages.stopTimers();
  await messages.closeWriterThread();
});

test('after the shutdown flush the thread and its connections are gone; a later flush writes here', async () => {
  const messages = remoteMessagesFor(app.deps);
  const sessionId = await newSession();
  for (let i = 0; i < 10; i++) messages.recordProxiedCall(call(sessionId, i));
  const left = await flushUsageAtShutdown(app.deps);
  assert.deepEqual(left, { settles: 0, reportRows: 0, messageRows: 0 });
  assert.equal(messages.writesOnThread(), false);
  assert.deepEqual(await stored(sessionId), { rows: 10, tokens: 420, messageCount: 10 });
  // The thread's pool is closed (a backend leaves pg_stat_activity a moment after its client ends).
  await waitUntil('writer connections closed', async () => (await writerConnections()) === 0);
  messages.recordProxiedCall(call(sessionId, 10));
  await messages.flush();
  assert.equal(messages.writesOnThread(), false);
  assert.deepEqual(await stored(sessionId), { rows: 11, tokens: 462, messageCount: 11 });
});

test('SVC_USAGE_WRITER_THREAD=off: the rows are written on this thread', async () => {
  const messages = remoteMessages({
    ...app.deps,
    settings: { ...app.settings, SVC_USAGE_WRITER_THREAD: 'off' },
  });
  const sessionId = await newSession();
  for (let i = 0; i < 5; i++) messages.recordProxiedCall(call(sessionId, i));
  await messages.flush();
  assert.equal(messages.writesOnThread(), false);
  assert.deepEqual(await stored(sessionId), { rows: 5, tokens: 210, messageCount: 5 });
  messages.stopTimers();
});

test('SVC_PROXY_ACCOUNTING=thread: the thread writes on SQLite too (its own WAL connection), all rows once', async () => {
  const messages = remoteMessages({
    ...app.deps,
    settings: { ...app.settings, SVC_PROXY_ACCOUNTING: 'thread' },
  });
  const sessionId = await newSession();
  for (let i = 0; i < 250; i++) messages.recordProxiedCall(call(sessionId, i));
  await messages.flush();
  assert.equal(messages.writesOnThread(), true, 'on both databases');
  assert.equal(messages.pending(), 0);
  assert.deepEqual(await stored(sessionId), { rows: 250, tokens: 250 * 42, messageCount: 250 });
  messages.stopTimers();
  await messages.closeWriterThread();
  assert.equal(messages.writesOnThread(), false);
});

test('SQLite, thread: its commits leave the caches alone; a commit of another process before a batch still clears them', async (t) => {
  if (pg) {
    t.skip('PostgreSQL invalidates by NOTIFY, not data_version');
    return;
  }
  const messages = remoteMessages({
    ...app.deps,
    settings: { ...app.settings, SVC_PROXY_ACCOUNTING: 'thread' },
  });
  t.after(async () => {
    messages.stopTimers();
    await messages.closeWriterThread();
  });
  const cache = invalidatedCache<string>(app.database, `writer-test-${randomUUID()}`, {
    max: 10,
    ttlMs: 60_000,
  });
  const cached = async () => {
    await sqliteCachesFresh(app.database);
    return cache.get('k');
  };
  await sqliteCachesFresh(app.database);
  cache.set('k', 'v', { userId, tenantId }, cache.generation);
  const sessionId = await newSession();
  for (let i = 0; i < 50; i++) messages.recordProxiedCall(call(sessionId, i));
  await messages.flush();
  assert.equal(messages.writesOnThread(), true);
  assert.equal((await stored(sessionId)).rows, 50);
  assert.equal(await cached(), 'v', "the thread's commits are not another process's");

  // Another process commits (its own connection to the file), then a batch is written: cleared.
  const other = new Database(app.database.file!);
  t.after(() => other.close());
  other.prepare("UPDATE tenants SET name = name || '-renamed' WHERE id = ?").run(tenantId);
  messages.recordProxiedCall(call(sessionId, 50));
  await messages.flush();
  assert.equal(cache.get('k'), undefined, "another process's commit clears the cache");
});
