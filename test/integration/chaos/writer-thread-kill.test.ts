// Chaos: the proxy's accounting writer thread (services/usage/message-writer-thread.ts, on both
// databases with SVC_PROXY_ACCOUNTING=thread) is killed while proxied calls are in flight and its
// batches are being written. Through the real API, a real proxy token and the mock provider:
//   - no call fails because of it; the API logs that it writes on its own thread from then on;
//   - every answered call is counted exactly once: the quota's request and token totals (written on
//     the serving side, never by the thread) and the assistant rows of daily_messages (the batch the
//     thread did not finish is written again on the API's thread; rows it had stored are skipped);
//   - after the clean shutdown flush nothing is left unwritten.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { proxyTokenService } from '../../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../../services/quota.ts';
import { flushUsageAtShutdown, remoteMessagesFor } from '../../../services/usage/remote-messages.ts';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../../fixtures/mock-provider.ts';
import { createTenant } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { waitUntil } from '../../support/remote.ts';
import { login } from '../../support/session.ts';
import { storeMockKey } from '../../support/session-teardown.ts';

const CALLS = 300;
const CONCURRENCY = 16;
const TOKENS = MOCK_USAGE.openaiChat.total_tokens;

let app: TestApp;
let mock: MockProvider;

before(async () => {
  app = await startTestApp({ env: { SVC_PROXY_ACCOUNTING: 'thread', SVC_QUOTA_LEASE_REQUESTS: '64' } });
  mock = await startMockProvider();
});
after(async () => {
  await mock?.close();
  await app?.close();
});

async function proxySession(): Promise<{ sessionId: string; token: string }> {
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  const tenantId = await createTenant(app, admin);
  await storeMockKey(app, admin, tenantId, mock);
  const { db, t } = app.database;
  const [user] = await db
    .insert(t.users)
    .values({ username: `writer-${randomUUID().slice(0, 8)}`, passwordHash: 'x', role: 'user', tenantId })
    .returning({ id: t.users.id });
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId,
    toolName: 'cli_alpha',
    hostName: 'writer-chaos',
    userId: user!.id,
    status: 'active',
    workspaceType: 'remote',
    remoteMachineId: 'writer-chaos',
  });
  const tokens = proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });
  const { token } = await tokens.issue({ sessionId, userId: user!.id, tenantId, provider: 'openai' });
  return { sessionId, token };
}

async function chat(token: string): Promise<number> {
  const res = await fetch(`${app.url}/api/remote/llm-proxy/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function counted(sessionId: string) {
  const [r] = await app.database.sql.query<Record<string, unknown>>(
    `SELECT request_count AS requests, total_tokens AS tokens, message_count AS messages,
            (SELECT COUNT(*) FROM daily_messages WHERE agent_session_id = ?) AS rows
     FROM agent_sessions WHERE session_id = ?`,
    [sessionId, sessionId],
  );
  return {
    requests: Number(r!.requests),
    tokens: Number(r!.tokens),
    messages: Number(r!.messages),
    rows: Number(r!.rows),
  };
}

test('the writer thread killed mid-batch: no call fails, every answered call is counted once', async () => {
  const { sessionId, token } = await proxySession();
  const messages = remoteMessagesFor(app.deps);
  const statuses: number[] = [];
  let next = 0;
  const load = Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) {
        next++;
        statuses.push(await chat(token));
      }
    }),
  );
  // Kill once the thread has stored some rows and still holds or is sent more.
  await waitUntil('the thread has written a batch', async () => {
    if (!messages.writesOnThread()) return false;
    return (await counted(sessionId)).rows > 0 && messages.pending() > 0;
  });
  const before = await counted(sessionId);
  await messages.killWriterThread();
  await load;
  assert.ok(before.rows < CALLS, `killed mid-run (${before.rows} rows stored before)`);
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
  );
  assert.equal(statuses.length, CALLS);

  // The quota's figures never depended on the thread; the rows come back through the fallback.
  await quotaServiceFor(app.deps).flush();
  await waitUntil('the unfinished batch is written on the API thread', async () => {
    await messages.flush();
    return messages.pending() === 0 && (await counted(sessionId)).rows === CALLS;
  });
  assert.equal(messages.writesOnThread(), false);
  assert.deepEqual(await counted(sessionId), {
    requests: CALLS,
    tokens: CALLS * TOKENS,
    messages: CALLS,
    rows: CALLS,
  });
  assert.ok(
    app.logs.some((l) => l.includes('writer thread died; writing on the API thread')),
    'the fallback is logged',
  );

  // More calls after the fallback, then the clean shutdown flush: exact, nothing left.
  for (let i = 0; i < 10; i++) assert.equal(await chat(token), 200);
  assert.deepEqual(await flushUsageAtShutdown(app.deps), { settles: 0, reportRows: 0, messageRows: 0 });
  assert.deepEqual(await counted(sessionId), {
    requests: CALLS + 10,
    tokens: (CALLS + 10) * TOKENS,
    messages: CALLS + 10,
    rows: CALLS + 10,
  });
});
