// The real Qwen Code (`cli_alpha`, the default tool; pinned in agent/cli-packages.ts, installed by
// `npm run clis:install`) end to end: the real agent starts the real CLI with its per-session QWEN_HOME,
// the CLI calls the real proxy with its session's proxy token on the OpenAI-compatible variables; the
// proxy swaps in the tenant's stored `openai` key and forwards to the mock provider (the only fake).
// Proves: the reply reaches the session output, the real key reached the provider and the proxy token
// did not; usage is counted; a provider error ends the turn with a `turn_error` note; a model change
// restarts the CLI with `--resume` and the new model; stop ends it. And, without the agent, that with
// the proxy unreachable the CLI fails and tried to connect to nothing but the proxy's address (strace).
// Skips, with the reason printed, when the pinned Qwen Code is not installed.
// store-independent: the real Qwen Code's behaviour under the agent; the proxy's rows and quota are
//   covered on both stores by llm-proxy*, laptop-clis and remote-usage-messages
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
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
  parseJson,
  sessionLines,
  startRealCliSession,
  storeProviderKey,
} from '../support/real-cli-session.ts';
import { realCli } from '../support/real-clis.ts';
import {
  type AgentProcess,
  buildRemoteCast,
  cliPid,
  processState,
  type RemoteCast,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

const cli = realCli('cli_alpha');
const skip = 'skip' in cli ? cli.skip : false;
if (skip) console.log(`# real-cli-alpha: skipped: ${skip}`);

const CLI_PATH = 'path' in cli ? cli.path : '';
const REAL_KEY = 'sk-openai-real-qwen-e2e-41f0b2';

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
let agent: AgentProcess;
let sessionId: string;
let projectDir: string;
let offline: ReturnType<typeof offlineCliRun> | undefined;

before(async () => {
  if (skip) return;
  // Qwen Code's outer retry loop (7 attempts, backoff from 1.5 s to 30 s, not configurable) made this
  // run take ~80 s of pure waiting: its timers run 20x faster (test/fixtures/fast-timers.mjs), the
  // attempts and the addresses they go to are the same (asserted below).
  offline = offlineCliRun('cli_alpha', CLI_PATH, {
    model: 'gpt-mock-1',
    timeoutMs: 150_000,
    env: { NODE_OPTIONS: `--import ${path.resolve('test/fixtures/fast-timers.mjs')}` },
  });
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  mock = await startMockProvider();
  projectDir = mkdtempSync(path.join(os.tmpdir(), 'svc-qwen-project-'));
  await storeProviderKey(app, cast, {
    provider: 'openai',
    key_name: 'qwen e2e',
    api_key: REAL_KEY,
    base_url: `${mock.url}/v1`,
  });
  // cli_tool is the default (cli_alpha); cli_path points at the pinned install, as install.sh does.
  // No cli_tool in the session request: the default tool is cli_alpha.
  ({ agent, sessionId } = await startRealCliSession(app, cast, {
    agentConfig: { cli_tool: 'cli_alpha', cli_path: CLI_PATH, cli_env: {} },
    model: 'gpt-mock-1',
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

test('a chat through Qwen Code: reply in the output, real key at the provider, usage counted', {
  skip,
}, async () => {
  const { db, t } = app.database;
  const [token] = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.equal(token!.provider, 'openai', 'cli_alpha gets a token for the openai key');
  const pid = await cliPid(app.url, cast.userA.session, sessionId);
  // The per-session QWEN_HOME (in the agent's state folder, not the project) and the quiet switches.
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  const qwenHome = env.find((v) => v.startsWith('QWEN_HOME='))?.slice('QWEN_HOME='.length);
  assert.ok(qwenHome && !qwenHome.startsWith(projectDir), `QWEN_HOME outside the project: ${qwenHome}`);
  assert.ok(
    env.includes('QWEN_TELEMETRY_ENABLED=false') && env.includes('QWEN_USAGE_STATISTICS_ENABLED=false'),
  );
  assert.doesNotMatch(readFileSync(path.join(qwenHome!, 'settings.json'), 'utf8'), /svcpt_/);

  const result = await turn('hello qwen');
  assert.equal(result.is_error, false, JSON.stringify(result));
  assert.equal(result.result, 'tok0 tok1 tok2 ');
  const calls = mock.requests.filter((r) => r.path === '/v1/chat/completions');
  // One model call for one turn: the background memory agent (a second call per turn) is off.
  assert.equal(calls.length, 1, mock.requests.map((r) => r.body.slice(0, 200)).join('\n'));
  for (const r of mock.requests) {
    assert.equal(r.headers.authorization, `Bearer ${REAL_KEY}`, `${r.method} ${r.path} carries the real key`);
    assert.ok(!JSON.stringify(r.headers).includes('svcpt_'), 'no proxy token reaches the provider');
  }
  assert.equal(parseJson(calls[0]!.body).model, 'gpt-mock-1', 'the session model is used');

  // Usage: the proxy metered every call into the user's quota and the tool's daily usage.
  const perCall = MOCK_USAGE.openaiChat.total_tokens;
  const { quota, daily } = await meteredUsage(app, cast, 'cli_alpha', calls.length, perCall);
  assert.ok(quota.tokensUsed >= perCall * calls.length, `tokens counted: ${quota.tokensUsed}`);
  assert.match(daily.modelsUsed ?? '', /gpt-mock-1/);
});

test('a provider error ends the Qwen Code turn with a turn_error note', { skip }, async () => {
  mock.setBehaviour({ errorStatus: 400 });
  try {
    const failed = await turn('this one fails');
    assert.equal(failed.is_error, true, JSON.stringify(failed));
  } finally {
    mock.setBehaviour({ errorStatus: undefined });
  }
  const note = await waitUntil('turn_error note', async () => (await agentNotes('turn_error'))[0]);
  assert.match(note.message, /400|mock provider error/);
});

test('a model change restarts Qwen Code with --resume and the new model', { skip }, async () => {
  const startedBefore = (await agentNotes('started')).length;
  const conversation = (await cliLines('system')).find((s) => s.subtype === 'init').session_id;
  const changed = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/model`, {
    auth: cast.userA.session,
    body: { model: 'gpt-mock-2' },
  });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  const pid = await cliPid(app.url, cast.userA.session, sessionId, startedBefore + 1);
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  assert.deepEqual(args.slice(args.indexOf('--resume'), args.indexOf('--resume') + 2), [
    '--resume',
    conversation,
  ]);
  assert.deepEqual(args.slice(args.indexOf('--model'), args.indexOf('--model') + 2), [
    '--model',
    'gpt-mock-2',
  ]);
  const callsBefore = mock.requests.length;
  const result = await turn('which model now');
  assert.equal(result.is_error, false, JSON.stringify(result));
  assert.equal(result.session_id, conversation, 'the same conversation goes on');
  const call = parseJson(
    mock.requests.slice(callsBefore).find((r) => r.path === '/v1/chat/completions')!.body,
  );
  assert.equal(call.model, 'gpt-mock-2');
  assert.ok(JSON.stringify(call.messages).includes('hello qwen'), 'the earlier turns were resumed');
});

test('stop ends Qwen Code and revokes the proxy token', { skip }, async () => {
  const pid = (await agentNotes('started')).at(-1).pid as number;
  const stopped = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, {
    auth: cast.userA.session,
  });
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  await waitUntil('CLI gone', async () => ['Z', undefined].includes(processState(pid)), 10000);
  const { db, t } = app.database;
  const tokens = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.ok(tokens.length >= 1 && tokens.every((tk) => tk.revokedAt));
});

test('with the proxy unreachable Qwen Code fails and tries no other host', { skip }, async () => {
  const run = await offline!;
  assertOfflineFailure('cli_alpha', run, /ECONNREFUSED|Connection error/i);
  // Every attempt of the outer loop went to the proxy: the faster timers cut no attempt.
  const attempts = run.run.connects.filter((c) => c.port === run.port).length;
  assert.ok(attempts >= 7, `${attempts} connections to the proxy`);
});
