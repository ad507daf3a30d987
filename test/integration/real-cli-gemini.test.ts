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
// store-independent: the real Gemini CLI's behaviour under the agent; the proxy's rows and quota are
//   covered on both stores by llm-proxy*, laptop-clis and remote-usage-messages
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { MOCK_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  assertOfflineFailure,
  meteredUsage,
  offlineCliRun,
  providerCalls,
  sessionLines,
  startRealCliSession,
  storeProviderKey,
} from '../support/real-cli-session.ts';
import { realCli } from '../support/real-clis.ts';
import { type AgentProcess, buildRemoteCast, type RemoteCast, waitUntil } from '../support/remote.ts';
import { api } from '../support/session.ts';

const cli = realCli('cli_delta');
const skip = 'skip' in cli ? cli.skip : false;
if (skip) console.log(`# real-cli-gemini: skipped: ${skip}`);

const CLI_PATH = 'path' in cli ? cli.path : '';
const REAL_KEY = 'AIza-real-gemini-e2e-93b7c5';

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
let agent: AgentProcess;
let sessionId: string;
let projectDir: string;
let offline: ReturnType<typeof offlineCliRun> | undefined;

before(async () => {
  if (skip) return;
  offline = offlineCliRun('cli_delta', CLI_PATH, { model: 'gemini-mock-1', timeoutMs: 90_000 });
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  mock = await startMockProvider();
  projectDir = mkdtempSync(path.join(os.tmpdir(), 'svc-gemini-project-'));
  await storeProviderKey(app, cast, {
    provider: 'gemini',
    key_name: 'gemini e2e',
    api_key: REAL_KEY,
    base_url: mock.url,
  });
  // cli_path points at the pinned install, as `install.sh --install-cli cli_delta` does.
  ({ agent, sessionId } = await startRealCliSession(app, cast, {
    agentConfig: { cli_tool: 'cli_delta', cli_path: CLI_PATH, cli_env: {} },
    cliTool: 'cli_delta',
    model: 'gemini-mock-1',
    projectPath: projectDir,
  }));
});
after(async () => {
  await agent?.stop();
  await mock?.close();
  await app?.close();
});

const { cliLines, agentNotes, chat } = sessionLines(() => ({ app, cast, sessionId }));

async function turn(content: string): Promise<any> {
  const before = (await cliLines('result')).length;
  await chat(content);
  return waitUntil(`end of the turn "${content}"`, async () => (await cliLines('result'))[before], 60000);
}

/** The model-call requests the mock received from index `from` on. */
const modelCalls = (from = 0) =>
  providerCalls(mock, /^\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent/, from);

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
  const { quota, daily } = await meteredUsage(app, cast, 'cli_delta', calls.length, perCall);
  assert.ok(quota.tokensUsed >= perCall * calls.length, `tokens counted: ${quota.tokensUsed}`);
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

test('with the proxy unreachable Gemini CLI fails and tries no other host', { skip }, async () => {
  assertOfflineFailure('cli_delta', await offline!, /fetch failed|ECONNREFUSED/i);
});
