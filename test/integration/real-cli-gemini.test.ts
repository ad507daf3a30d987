// The real Gemini CLI (`cli_delta`, the `<provider_c>` mapping; pinned in agent/cli-packages.ts, installed
// by `npm run clis:install`) end to end: the real agent starts one real CLI process per turn with its
// per-session GEMINI_CLI_HOME (API-key auth selected, telemetry and updates off) and workspace trust;
// the CLI calls the real proxy (GOOGLE_GEMINI_BASE_URL) with the session's proxy token as
// GEMINI_API_KEY; the proxy swaps in the tenant's stored `gemini` key and forwards to the mock
// provider (the only fake). Proves: the reply reaches the session output, the real key reached the
// provider and the proxy token did not; usage is counted; a provider error ends the turn with a
// `turn_error` note; a model change applies from the next turn, which resumes the conversation; stop
// ends the session. And, without the agent, that with the proxy unreachable the CLI fails and tried to
// connect to nothing but the proxy's address (strace).
// Skips, with the reason printed, when the pinned Gemini CLI is not installed.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { buildCliEnv, getAdapter } from '../../agent/adapters.ts';
import { dayKey } from '../../domain/quota.ts';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { foreignConnects, traceConnects } from '../support/connect-trace.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { realCli } from '../support/real-clis.ts';
import {
  type AgentProcess,
  assign,
  buildRemoteCast,
  type RemoteCast,
  registrationToken,
  sessionOutput,
  startAgent,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

const cli = realCli('cli_delta');
const skip = 'skip' in cli ? cli.skip : false;
if (skip) console.log(`# real-cli-gemini: skipped: ${skip}`);

const REAL_KEY = 'AIza-real-gemini-e2e-93b7c5';

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
let agent: AgentProcess;
let sessionId: string;
let projectDir: string;
let offline: ReturnType<typeof offlineRun> | undefined;

before(async () => {
  if (skip) return;
  offline = offlineRun();
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  mock = await startMockProvider();
  projectDir = mkdtempSync(path.join(os.tmpdir(), 'svc-gemini-project-'));
  const key = await api(app.url, 'POST', '/api/remote/api-keys', {
    auth: cast.admin.session,
    body: {
      provider: 'gemini',
      key_name: 'gemini e2e',
      api_key: REAL_KEY,
      base_url: mock.url,
      tenant_id: cast.tenantId,
    },
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  // cli_path points at the pinned install, as `install.sh --install-cli cli_delta` does.
  agent = startAgent({
    serverUrl: app.url,
    registrationToken: token,
    extra: { cli_tool: 'cli_delta', cli_path: (cli as { path: string }).path, cli_env: {} },
  });
  const machineId = await waitUntil('agent registration', async () => agent.config().machine_id, 20000);
  await waitUntil('machine online', async () => {
    const r = await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.admin.session });
    return r.body?.status === 'online';
  });
  assert.equal((await assign(app.url, cast.admin.session, machineId, cast.userA.id, 'user')).status, 200);
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir, cli_tool: 'cli_delta', model: 'gemini-mock-1' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  sessionId = created.body.session_id;
});
after(async () => {
  await agent?.stop();
  await mock?.close();
  await app?.close();
});

const output = () => sessionOutput(app.url, cast.userA.session, sessionId);
const json = (data: string): any => {
  try {
    return JSON.parse(data);
  } catch {
    return {};
  }
};
const cliLines = async (type: string) =>
  (await output())
    .filter((e) => e.stream === 'stdout')
    .map((e) => json(e.data))
    .filter((d) => d.type === type);
const agentNotes = async (event: string) =>
  (await output())
    .filter((e) => e.stream === 'system')
    .map((e) => json(e.data))
    .filter((d) => d.event === event);

async function turn(content: string): Promise<any> {
  const before = (await cliLines('result')).length;
  const r = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return waitUntil(`end of the turn "${content}"`, async () => (await cliLines('result'))[before], 60000);
}

/** The model-call requests the mock received from index `from` on. */
const modelCalls = (from = 0) =>
  mock.requests
    .slice(from)
    .filter((r) => /^\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent/.test(r.path));

test('a chat through Gemini CLI: reply in the output, real key at the provider, usage counted', {
  skip,
}, async () => {
  const { db, t } = app.database;
  const [token] = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.equal(token!.provider, 'gemini', 'cli_delta gets a token for the gemini key');
  const result = await turn('hello gemini');
  assert.equal(result.status, 'success', JSON.stringify(result));
  const reply = (await cliLines('message'))
    .filter((m) => m.role === 'assistant')
    .map((m) => m.content)
    .join('');
  assert.equal(reply, 'tok0 tok1 tok2 ');
  const [started] = await agentNotes('started');
  assert.equal(started.resumed, false);

  const calls = modelCalls();
  assert.ok(calls.length >= 1, mock.requests.map((r) => r.path).join(' '));
  assert.match(calls[0]!.path, /^\/v1beta\/models\/gemini-mock-1:streamGenerateContent/, 'the session model');
  for (const r of mock.requests) {
    assert.equal(r.headers['x-goog-api-key'], REAL_KEY, `${r.method} ${r.path} carries the real key`);
    assert.ok(!JSON.stringify(r.headers).includes('svcpt_'), 'no proxy token reaches the provider');
    assert.ok(!r.path.includes('svcpt_'), 'nor in the URL');
  }

  // Usage: the proxy metered every call into the user's quota and the tool's daily usage.
  const perCall = MOCK_USAGE.gemini.totalTokenCount;
  const quota = await waitUntil('quota counted', async () => {
    const [row] = await db
      .select()
      .from(t.quotaUsage)
      .where(
        and(
          eq(t.quotaUsage.userId, cast.userA.id),
          eq(t.quotaUsage.period, 'daily'),
          eq(t.quotaUsage.date, dayKey(app.clock.now())),
        ),
      );
    return row && row.requestsUsed >= calls.length && row.requestsReserved === 0 ? row : undefined;
  });
  assert.ok(quota.tokensUsed >= perCall * calls.length, `tokens counted: ${quota.tokensUsed}`);
  const daily = await waitUntil('daily usage', async () => {
    const [row] = await db
      .select()
      .from(t.dailyUsage)
      .where(and(eq(t.dailyUsage.tenantId, cast.tenantId), eq(t.dailyUsage.toolName, 'cli_delta')));
    return row && row.tokensUsed >= perCall ? row : undefined;
  });
  assert.match(daily.modelsUsed ?? '', /gemini-mock-1/);
});

test('a provider error ends the Gemini CLI turn with a turn_error note', { skip }, async () => {
  mock.setBehaviour({ errorStatus: 400 });
  try {
    const failed = await turn('this one fails');
    assert.equal(failed.status, 'error', JSON.stringify(failed));
  } finally {
    mock.setBehaviour({ errorStatus: undefined });
  }
  const note = await waitUntil('turn_error note', async () => (await agentNotes('turn_error'))[0]);
  assert.match(note.message, /400|mock provider error/);
});

test('a model change applies from the next Gemini CLI turn, which resumes the conversation', {
  skip,
}, async () => {
  const conversation = (await cliLines('init'))[0].session_id;
  const changed = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/model`, {
    auth: cast.userA.session,
    body: { model: 'gemini-mock-2' },
  });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  const callsBefore = mock.requests.length;
  const startedBefore = (await agentNotes('started')).length;
  const result = await turn('which model now');
  assert.equal(result.status, 'success', JSON.stringify(result));
  const started = (await agentNotes('started'))[startedBefore];
  assert.equal(started.resumed, true, 'the turn process resumed the conversation');
  assert.equal((await cliLines('init')).at(-1).session_id, conversation, 'the same conversation goes on');
  const call = modelCalls(callsBefore)[0]!;
  assert.match(call.path, /^\/v1beta\/models\/gemini-mock-2:/, 'the new model');
  assert.ok(call.body.includes('hello gemini'), 'the earlier turns were resumed');
});

test('stop ends the Gemini CLI session and revokes the proxy token', { skip }, async () => {
  const stopped = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, {
    auth: cast.userA.session,
  });
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  await waitUntil('session exited', async () => (await agentNotes('exited'))[0], 10000);
  const { db, t } = app.database;
  const tokens = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.ok(tokens.length >= 1 && tokens.every((tk) => tk.revokedAt));
});

/**
 * The CLI alone, as the agent would start it, with the proxy address closed, under strace. Started in
 * `before` and awaited by the last test, so its retries (GEMINI_MAX_ATTEMPTS, ~15 s) overlap the
 * end-to-end tests.
 */
async function offlineRun() {
  const adapter = getAdapter('cli_delta');
  const port = await closedPort();
  const proxy = `http://127.0.0.1:${port}/api/remote/llm-proxy`;
  // The environment and session files the agent gives the CLI.
  const sessionEnv = adapter.prepareSessionDir!(
    mkdtempSync(path.join(os.tmpdir(), 'svc-gemini-state-')),
    proxy,
  );
  const env = buildCliEnv(adapter, process.env, 'svcpt_unreachable', proxy, sessionEnv);
  const run = await traceConnects((cli as { path: string }).path, adapter.startArgs('gemini-mock-1'), {
    env,
    cwd: mkdtempSync(path.join(os.tmpdir(), 'svc-gemini-offline-')),
    stdin: adapter.formatInput('hello?'),
    timeoutMs: 90_000,
  });
  return { run, port };
}

test('with the proxy unreachable Gemini CLI fails and tries no other host', { skip }, async () => {
  const { run, port } = await offline!;
  const adapter = getAdapter('cli_delta');
  assert.equal(run.timedOut, false, 'the CLI gave up by itself');
  const result = run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map(json)
    .find((e) => e.type === 'result');
  assert.ok(result, `a result line: ${run.stdout.slice(-500)} ${run.stderr.slice(-500)}`);
  const info = adapter.inspect(result);
  assert.equal(info.turnEnded, true);
  assert.match(info.turnError ?? '', /fetch failed|ECONNREFUSED/i, 'the agent sees a turn error');
  assert.ok(
    run.connects.some((c) => c.port === port),
    'it did try the proxy',
  );
  assert.deepEqual(foreignConnects(run, [`127.0.0.1:${port}`]), [], 'no connection to any other address');
});

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
