// The real Claude Code (`cli_beta`, pinned in agent/cli-packages.ts, installed by `npm run clis:install`)
// end to end: the real agent starts the real CLI, which calls the real proxy with its session's proxy
// token; the proxy swaps in the tenant's stored Anthropic key and forwards to the mock provider (the
// only fake). Proves: the reply reaches the session output and the real key reached the provider while
// the proxy token did not; usage is counted; the CLI's warm-up leaves no refusal audit row; tool
// permission prompts round-trip (allow runs the tool, deny does not); a turn the CLI ends with an
// error and a turn that stalls are reported to the session; a model change restarts the CLI with
// `--resume`; stop ends it. And, without the agent, that with the proxy unreachable the CLI fails
// and tried to connect to nothing but the proxy's address (strace).
// Skips, with the reason printed, when the pinned Claude Code is not installed.
// store-independent: the real Claude Code's behaviour under the agent; the proxy's rows and quota are
//   covered on both stores by llm-proxy*, laptop-clis and remote-usage-messages
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
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

const cli = realCli('cli_beta');
const skip = 'skip' in cli ? cli.skip : false;
if (skip) console.log(`# real-cli-claude: skipped: ${skip}`);

const CLI_PATH = 'path' in cli ? cli.path : '';
const REAL_KEY = 'sk-ant-real-claude-e2e-7c1d9a';
/** The agent's turn_stall_timeout here. */
const STALL_SECONDS = 15;
/** Anthropic wire usage per mock call, as the proxy counts it (input + cache read + cache write + output). */
const TOKENS_PER_CALL =
  MOCK_USAGE.anthropic.input_tokens +
  MOCK_USAGE.anthropic.cache_read_input_tokens +
  MOCK_USAGE.anthropic.cache_creation_input_tokens +
  MOCK_USAGE.anthropic.output_tokens;

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
let agent: AgentProcess;
let sessionId: string;
let projectDir: string;

before(async () => {
  if (skip) return;
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  mock = await startMockProvider();
  projectDir = mkdtempSync(path.join(os.tmpdir(), 'svc-claude-project-'));
  await storeProviderKey(app, cast, {
    provider: 'anthropic',
    key_name: 'claude e2e',
    api_key: REAL_KEY,
    base_url: mock.url,
  });
  ({ agent, sessionId } = await startRealCliSession(app, cast, {
    agentConfig: {
      cli_tool: 'cli_beta',
      cli_path: CLI_PATH,
      // No CLAUDE_CONFIG_DIR: in the sandbox Claude Code keeps its settings and transcripts in the
      // session's own home, not in the user's ~/.claude.
      // Long enough that no ordinary turn stalls on a loaded CI machine (4 s once ended the first
      // turn, while Claude Code was still starting), short enough for the stalled-turn test.
      turn_stall_timeout: STALL_SECONDS,
    },
    cliTool: 'cli_beta',
    model: 'claude-mock-1',
    projectPath: projectDir,
  }));
});
after(async () => {
  if (process.env.REAL_CLI_DEBUG && sessionId)
    for (const e of await output()) console.log(e.event_index, e.stream, e.data.slice(0, 400));
  if (process.env.REAL_CLI_DEBUG) console.log(agent?.logs.join('').slice(-5000));
  await agent?.stop();
  await mock?.close();
  await app?.close();
});

const { output, cliLines, agentNotes, chat } = sessionLines(() => ({ app, cast, sessionId }));

/** Sends a message and waits for the CLI's `result` line of that turn. */
async function turn(content: string): Promise<any> {
  const before = (await cliLines('result')).length;
  await chat(content);
  return waitUntil(`end of the turn "${content}"`, async () => (await cliLines('result'))[before], 90_000);
}

test('a chat through Claude Code: reply in the output, real key at the provider, usage counted', {
  skip,
}, async () => {
  await cliPid(app.url, cast.userA.session, sessionId);
  const result = await turn('hello claude');
  assert.equal(result.is_error, false, JSON.stringify(result));
  assert.equal(result.result, 'tok0 tok1 tok2 ');
  const replies = (await cliLines('assistant')).flatMap((a) => a.message?.content ?? []);
  assert.ok(
    replies.some((c: any) => c.text === 'tok0 tok1 tok2 '),
    'the assistant line is in the output',
  );

  // Claude Code talked to the proxy only; the provider saw the stored key, never a proxy token.
  const calls = mock.requests.filter((r) => r.path.startsWith('/v1/messages'));
  assert.ok(calls.length >= 1);
  for (const r of mock.requests) {
    assert.equal(r.headers['x-api-key'], REAL_KEY, `${r.method} ${r.path} carries the real key`);
    assert.ok(!JSON.stringify(r.headers).includes('svcpt_'), 'no proxy token reaches the provider');
  }
  assert.equal(parseJson(calls[0]!.body).model, 'claude-mock-1', 'the session model is used');

  // Usage: the proxy metered each call into the user's quota and the tool's daily usage.
  const { db, t } = app.database;
  const { quota, daily } = await meteredUsage(app, cast, 'cli_beta', calls.length, TOKENS_PER_CALL);
  assert.ok(quota.tokensUsed >= TOKENS_PER_CALL, `tokens counted: ${quota.tokensUsed}`);
  assert.match(daily.modelsUsed ?? '', /claude-mock-1/);

  // The CLI's start-up (connection warm-up included) left no refusal in the audit log.
  const refusals = await db
    .select()
    .from(t.auditLogs)
    .where(eq(t.auditLogs.action, 'REMOTE_LLM_PROXY_REFUSED'));
  assert.deepEqual(
    refusals.map((r) => r.details),
    [],
  );
});

test('permission prompts: allow runs the tool, deny does not; both turns end', { skip }, async (t) => {
  t.after(() => mock.setBehaviour({ anthropicToolUse: undefined }));
  for (const decision of ['allow', 'deny'] as const) {
    const file = path.join(projectDir, `written-on-${decision}.txt`);
    mock.setBehaviour({ anthropicToolUse: { name: 'Write', input: { file_path: file, content: 'hi\n' } } });
    const asked = (await output()).filter((e) => e.stream === 'permission').length;
    const results = (await cliLines('result')).length;
    await chat(`write ${path.basename(file)}`);
    const request = await waitUntil(
      'permission event',
      async () => (await output()).filter((e) => e.stream === 'permission')[asked],
      90_000,
    );
    const prompt = parseJson(request.data);
    assert.equal(prompt.type, 'control_request');
    assert.equal(prompt.request.subtype, 'can_use_tool');
    assert.equal(prompt.request.tool_name, 'Write');
    assert.equal(existsSync(file), false, 'nothing runs before the answer');
    const answer = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/permission`, {
      auth: cast.userA.session,
      body: { request_id: prompt.request_id, decision },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.agent_response?.ok, true, JSON.stringify(answer.body));
    const result = await waitUntil('turn end', async () => (await cliLines('result'))[results], 90_000);
    if (decision === 'allow') {
      assert.equal(readFileSync(file, 'utf8'), 'hi\n', 'the allowed tool ran');
      assert.deepEqual(result.permission_denials, []);
    } else {
      assert.equal(existsSync(file), false, 'the denied tool did not run');
      assert.equal(result.permission_denials?.[0]?.tool_name, 'Write');
    }
  }
});

test('an error turn and a stalled turn are reported to the session', { skip }, async (t) => {
  // The provider refuses (400, not retried): Claude Code ends the turn with is_error.
  t.after(() => mock.setBehaviour({ errorStatus: undefined, responseDelayMs: 0 }));
  mock.setBehaviour({ errorStatus: 400 });
  const failed = await turn('this one fails');
  mock.setBehaviour({ errorStatus: undefined });
  assert.equal(failed.is_error, true);
  const errors = await waitUntil('turn_error note', async () => (await agentNotes('turn_error'))[0]);
  assert.match(errors.message, /400|mock provider error/);

  // The provider does not answer (for 2 minutes, or until the call is abandoned): after
  // turn_stall_timeout (STALL_SECONDS) the agent reports the stall and restarts the CLI (resuming its
  // conversation); the session goes on. The waits below are generous for a loaded CI machine.
  mock.setBehaviour({ responseDelayMs: 120_000 });
  const started = Date.now();
  const hanging = mock.requests.length;
  const stallsBefore = (await agentNotes('turn_stalled')).length;
  const startsBefore = (await agentNotes('started')).length;
  await chat('this one hangs');
  const stalled = await waitUntil(
    'turn_stalled note',
    async () => (await agentNotes('turn_stalled'))[stallsBefore],
    STALL_SECONDS * 1000 + 60_000,
  );
  mock.setBehaviour({ responseDelayMs: 0 });
  assert.equal(stalled.timeout_ms, STALL_SECONDS * 1000);
  assert.ok(Date.now() - started >= STALL_SECONDS * 1000);
  const restarted = await waitUntil(
    'restart after the stall',
    async () => (await agentNotes('started'))[startsBefore],
    60_000,
  );
  assert.equal(restarted.resumed, true);
  // The CLI went away mid-call: the proxy gave up its upstream call too.
  assert.equal((await mock.waitForClosed(hanging, 30_000)).aborted, true);
  const result = await turn('after the stall');
  assert.equal(result.is_error, false);
});

test('a model change restarts Claude Code with --resume and the new model', { skip }, async () => {
  const startedBefore = (await agentNotes('started')).length;
  const conversation = (await cliLines('system')).find((s) => s.subtype === 'init').session_id;
  const changed = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/model`, {
    auth: cast.userA.session,
    body: { model: 'claude-mock-2' },
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
    'claude-mock-2',
  ]);
  const callsBefore = mock.requests.length;
  const result = await turn('which model now');
  assert.equal(result.is_error, false);
  assert.equal(result.session_id, conversation, 'the same conversation goes on');
  const call = parseJson(
    mock.requests.slice(callsBefore).find((r) => r.path.startsWith('/v1/messages'))!.body,
  );
  assert.equal(call.model, 'claude-mock-2');
  assert.ok(JSON.stringify(call.messages).includes('hello claude'), 'the earlier turns were resumed');
});

test('stop ends Claude Code and revokes the proxy token', { skip }, async () => {
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

test('with the proxy unreachable Claude Code fails and tries no other host', { skip }, async () => {
  // The environment the agent gives the CLI, with one retry so the failure comes quickly.
  const offline = await offlineCliRun('cli_beta', CLI_PATH, {
    timeoutMs: 60_000,
    env: {
      CLAUDE_CONFIG_DIR: mkdtempSync(path.join(os.tmpdir(), 'svc-claude-config-')),
      CLAUDE_CODE_MAX_RETRIES: '1',
    },
  });
  assertOfflineFailure('cli_beta', offline, /ECONNREFUSED|Connection refused/i);
});
