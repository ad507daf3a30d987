// cli_gamma with the real Codex CLI (the pinned @openai/codex from agent/cli-packages.ts, installed by
// `npm run clis:install`), unmodified, configured only through the per-session CODEX_HOME the agent
// writes (agent/codex-home.ts):
//   1. with the proxy unreachable, `codex exec` fails within seconds (turn.failed, non-zero exit) and
//      attempts no connection, DNS query included, to anything but the configured proxy address;
//   2. the whole path: agent -> real Codex -> model proxy (an OpenAI key with base URL = the mock,
//      stored by a system admin) -> mock provider (Responses API, SSE) -> reply in the session output,
//      usage counted once in quota_usage and daily_usage, no WebSocket attempt;
//   3. a model change applies from the next turn, which resumes Codex's thread;
//   4. stop ends the session and removes its CODEX_HOME.
// Skips, with the reason printed, when the CLI is not installed.
// store-independent: the real Codex's behaviour under the agent; the proxy's rows and quota are covered on
//   both stores by llm-proxy*, laptop-clis and remote-usage-messages
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { buildCliEnv, getAdapter } from '../../agent/adapters.ts';
import { writeCodexHome } from '../../agent/codex-home.ts';
import { dayKey } from '../../domain/quota.ts';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { foreignConnects, traceConnects } from '../support/connect-trace.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  closedPort,
  jsonLinesOf,
  sessionLines,
  startRealCliSession,
  storeProviderKey,
} from '../support/real-cli-session.ts';
import { realCli } from '../support/real-clis.ts';
import { type AgentProcess, buildRemoteCast, type RemoteCast, waitUntil } from '../support/remote.ts';
import { api } from '../support/session.ts';

const codex = realCli('cli_gamma');
const skip = 'skip' in codex ? codex.skip : undefined;
if (skip) console.log(`# real-cli-codex: skipped: ${skip}`);
const CODEX = 'path' in codex ? codex.path : '';
const REAL_KEY = 'sk-real-openai-codex-7e6d5c4b3a29';
/** Tokens the mock reports per Responses call (input + output; cached input is part of input). */
const TOKENS_PER_CALL = MOCK_USAGE.openaiResponses.input_tokens + MOCK_USAGE.openaiResponses.output_tokens;

let app: TestApp | undefined;
let cast: RemoteCast;
let mock: MockProvider | undefined;
let agent: AgentProcess | undefined;
let sessionId: string;

before(async () => {
  if (skip) return;
  mock = await startMockProvider();
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  await storeProviderKey(app, cast, {
    provider: 'openai',
    key_name: 'codex e2e',
    api_key: REAL_KEY,
    base_url: `${mock.url}/v1`,
  });
});
after(async () => {
  await agent?.stop();
  await app?.close();
  await mock?.close();
});

const { stream, chat } = sessionLines(() => ({ app: app!, cast, sessionId }));
const responsesCalls = () => mock!.requests.filter((r) => r.path === '/v1/responses');

test('proxy unreachable: Codex fails fast and tries no host but the proxy address', { skip }, async () => {
  const port = await closedPort();
  const adapter = getAdapter('cli_gamma');
  const home = mkdtempSync(path.join(os.tmpdir(), 'svc-codex-home-'));
  const proxyBaseUrl = `http://127.0.0.1:${port}/api/remote/llm-proxy`;
  // Exactly the environment the agent gives a turn: from scratch, plus CODEX_HOME and the proxy token.
  const env = buildCliEnv(adapter, process.env, 'svcpt_unreachable', proxyBaseUrl, {
    ...writeCodexHome(home, proxyBaseUrl, adapter.keyVar),
  });
  const project = mkdtempSync(path.join(os.tmpdir(), 'svc-codex-project-'));
  const startedAt = Date.now();
  const run = await traceConnects(CODEX, adapter.startArgs('mock-model'), {
    env,
    cwd: project,
    stdin: 'hello',
    timeoutMs: 30_000,
    udpSends: true,
  }).finally(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  });
  const ms = Date.now() - startedAt;
  console.log(`# codex with the proxy unreachable: failed after ${ms} ms, ${run.connects.length} connects`);
  assert.equal(run.timedOut, false, `Codex did not give up: ${run.stdout}\n${run.stderr}`);
  assert.notEqual(run.code, 0);
  const events = jsonLinesOf(run.stdout);
  assert.ok(
    events.some((e) => e.type === 'turn.failed'),
    `turn.failed reported: ${run.stdout}`,
  );
  assert.ok(run.connects.length > 0, 'it did try the proxy');
  assert.deepEqual(foreignConnects(run, [`127.0.0.1:${port}`]), [], 'no other host, no DNS server');
  const adapterSaw = events.map((e) => adapter.inspect(e));
  assert.ok(
    adapterSaw.some((i) => i.turnEnded && i.turnError),
    'the adapter reports the failed turn',
  );
});

test('agent -> real Codex -> proxy -> mock: reply, usage counted once, no WebSocket', { skip }, async () => {
  const a = app!;
  const project = mkdtempSync(path.join(os.tmpdir(), 'svc-codex-project-'));
  ({ agent, sessionId } = await startRealCliSession(a, cast, {
    agentConfig: { cli_tool: 'cli_gamma', cli_path: CODEX, cli_env: {} },
    cliTool: 'cli_gamma',
    model: 'mock-model',
    projectPath: project,
  }));
  await waitUntil('ready note', async () => (await stream('system')).some((n) => n.event === 'ready'));
  const sessionsDir = path.join(agent!.dir, 'sessions');
  assert.equal(readdirSync(sessionsDir).length, 1, 'one CODEX_HOME for the session, in the agent folder');

  const sentAt = Date.now();
  await chat('hello codex');
  const turn = await waitUntil(
    'turn.completed',
    async () => {
      const events = await stream('stdout');
      return events.some((e) => e.type === 'turn.completed') ? events : undefined;
    },
    30_000,
  );
  console.log(`# codex turn through the proxy: chat POST to turn.completed ${Date.now() - sentAt} ms`);
  const reply = turn.find((e) => e.type === 'item.completed' && e.item?.type === 'agent_message');
  assert.equal(reply?.item.text, 'tok0 tok1 tok2 ', 'the mock reply reaches the session output');
  assert.ok(turn.some((e) => e.type === 'thread.started' && e.thread_id));

  // The provider saw the real key on the Responses endpoint, streamed; never the proxy token, never
  // a WebSocket upgrade, nothing but /v1/responses.
  const calls = responsesCalls();
  assert.ok(calls.length >= 1);
  assert.deepEqual(
    mock!.requests.filter((r) => r.path !== '/v1/responses').map((r) => `${r.method} ${r.path}`),
    [],
  );
  for (const r of calls) {
    assert.equal(r.headers.authorization, `Bearer ${REAL_KEY}`);
    assert.equal(r.headers.upgrade, undefined);
    const body = JSON.parse(r.body);
    assert.equal(body.model, 'mock-model');
    assert.equal(body.stream, true);
    assert.ok(!r.body.includes('svcpt_'), 'no proxy token in the body');
  }

  // Usage: the proxy metered every call from the Responses stream; the agent's own report
  // (via_proxy: true) does not count it again.
  const expected = calls.length * TOKENS_PER_CALL;
  const { db, t } = a.database;
  const daily = await waitUntil('daily_usage', async () => {
    const [row] = await db
      .select()
      .from(t.dailyUsage)
      .where(and(eq(t.dailyUsage.tenantId, cast.tenantId), eq(t.dailyUsage.toolName, 'cli_gamma')));
    return row && row.tokensUsed >= expected ? row : undefined;
  });
  assert.equal(daily.tokensUsed, expected);
  assert.equal(daily.requestCount, calls.length);
  assert.match(daily.modelsUsed ?? '', /mock-model/);
  const quota = await db.select().from(t.quotaUsage).where(eq(t.quotaUsage.userId, cast.userA.id));
  const today = quota.find((q) => q.period === 'daily' && q.date === dayKey(a.clock.now()));
  assert.equal(today?.tokensUsed, expected);
});

test('a model change applies from the next turn, which resumes the Codex thread', { skip }, async () => {
  const a = app!;
  const before = responsesCalls().length;
  const changed = await api(a.url, 'POST', `/api/remote/sessions/${sessionId}/model`, {
    auth: cast.userA.session,
    body: { model: 'mock-model-2' },
  });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  await waitUntil('applied note', async () => (await stream('system')).some((n) => n.event === 'applied'));
  await chat('again');
  await waitUntil(
    'second turn.completed',
    async () => (await stream('stdout')).filter((e) => e.type === 'turn.completed').length >= 2,
    30_000,
  );
  const later = responsesCalls().slice(before);
  assert.ok(later.length >= 1);
  for (const r of later) assert.equal(JSON.parse(r.body).model, 'mock-model-2');
  const started = (await stream('system')).filter((n) => n.event === 'started');
  assert.equal(started.length, 2, 'one Codex process per turn');
  assert.equal(started[1].resumed, true, 'the second turn resumed the thread');
  // Codex sent the first turn's conversation back: the thread really was resumed.
  assert.match(later[0]!.body, /hello codex/);
});

test('stop ends the session and removes its CODEX_HOME', { skip }, async () => {
  const a = app!;
  const stopped = await api(a.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, {
    auth: cast.userA.session,
  });
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  await waitUntil('exited note', async () => (await stream('system')).some((n) => n.event === 'exited'));
  assert.deepEqual(readdirSync(path.join(agent!.dir, 'sessions')), []);
  const turnErrors = (await stream('system')).filter((n) => n.event === 'turn_error');
  assert.deepEqual(turnErrors, [], 'no turn ended in error');
});
