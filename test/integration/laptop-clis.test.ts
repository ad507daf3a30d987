// The four real CLIs on a developer's laptop (issue 29, item 3): a user creates a personal gateway key
// (POST /api/gateway-keys) and each CLI runs one prompt as a user runs it (test/support/laptop-cli.ts:
// a temp HOME, no agent, the CLI's own variables and config files point it at the service's model
// proxy with the key, and export its OpenTelemetry to the service's /v1/logs and /v1/metrics with the
// key as bearer, through a recording relay so the test knows each export was answered). The proxy
// swaps in the tenant's stored provider key and forwards to the mock provider (the only fake).
// Checks, per CLI: the reply, the real key at the provider, one `gateway` assistant row per model call
// for the user with the mock's tokens, the quota counters, the exports accepted and not counted again
// (no `otel` row), Claude Code's lines of code and edit decision; a key over its owner's quota is
// refused by the proxy with the CLI's own error output showing it; a revoked key stops.
// A CLI that is not installed skips with the reason.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { LLM_PROXY_PREFIX } from '../../api/routes/remote/llm-proxy.ts';
import { dayKey } from '../../domain/quota.ts';
import { MOCK_EXPECTED_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { type LaptopRun, type OtlpCapture, runLaptopCli, startOtlpCapture } from '../support/laptop-cli.ts';
import { dailyQuotaRow, setUserQuota } from '../support/quota.ts';
import { storeProviderKey } from '../support/real-cli-session.ts';
import { realCli } from '../support/real-clis.ts';
import { buildRemoteCast, type Person, person, type RemoteCast, waitUntil } from '../support/remote.ts';
import { api } from '../support/session.ts';

type Provider = 'anthropic' | 'openai' | 'gemini';

interface LaptopCase {
  tool: string;
  name: string;
  provider: Provider;
  /** Text in the logs export that carries the CLI's request event (test/fixtures/otlp/README.md). */
  requestEvent: string;
  /** The tool_name the proxy gives the CLI's calls (from its User-Agent). */
  toolName: string;
  /** Claude Code: the turn writes a file (the mock answers with a Write call), for its productivity figures. */
  edit?: boolean;
  model: string;
  /** The provider path of its model call and the mock's usage of one such call. */
  callPath: RegExp;
  usage: (typeof MOCK_EXPECTED_USAGE)[keyof typeof MOCK_EXPECTED_USAGE];
  /**
   * Qwen Code waits out a 429's Retry-After (the proxy sends the seconds until the quota period ends)
   * and prints nothing meanwhile: the test ends it once the proxy's refusal is in the audit log.
   */
  waitsOnQuota?: boolean;
}

const CASES: LaptopCase[] = [
  {
    tool: 'cli_beta',
    toolName: 'claude-code',
    requestEvent: 'api_request',
    name: 'Claude Code',
    provider: 'anthropic',
    edit: true,
    model: 'claude-mock-1',
    callPath: /^\/v1\/messages(\?|$)/,
    usage: MOCK_EXPECTED_USAGE['anthropic-messages'],
  },
  {
    tool: 'cli_gamma',
    toolName: 'codex',
    requestEvent: 'response.completed',
    name: 'Codex',
    provider: 'openai',
    model: 'gpt-mock-1',
    callPath: /^\/v1\/responses$/,
    usage: MOCK_EXPECTED_USAGE['openai-responses'],
  },
  {
    tool: 'cli_delta',
    toolName: 'gemini-cli',
    requestEvent: 'gemini_cli.api_response',
    name: 'Gemini CLI',
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    callPath: /:streamGenerateContent/,
    usage: MOCK_EXPECTED_USAGE['gemini-generate'],
  },
  {
    tool: 'cli_alpha',
    toolName: 'qwen-code',
    requestEvent: 'qwen-code.api_response',
    name: 'Qwen Code',
    provider: 'openai',
    model: 'qwen-mock-1',
    callPath: /^\/v1\/chat\/completions$/,
    usage: MOCK_EXPECTED_USAGE['openai-chat'],
    waitsOnQuota: true,
  },
];

const REAL_KEYS: Record<Provider, string> = {
  anthropic: 'sk-ant-laptop-real-4f2a9c',
  openai: 'sk-openai-laptop-real-8b1e3d',
  gemini: 'AIza-laptop-real-6c0d7f',
};

/** What each CLI prints of the proxy's refusals (its own error or retry line). */
const QUOTA_REFUSAL = /quota is exhausted|\b429 Too Many Requests\b/;
const REVOKED = /revoked|\b401\b/i;

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
let otlp: OtlpCapture;
const proxyUrl = () => `${app.url}${LLM_PROXY_PREFIX}`;

before(async () => {
  app = await startTestApp();
  cast = await buildRemoteCast(app);
  mock = await startMockProvider();
  otlp = await startOtlpCapture({ forwardTo: app.url });
  for (const provider of ['anthropic', 'openai', 'gemini'] as const)
    await storeProviderKey(app, cast, {
      provider,
      key_name: `laptop ${provider}`,
      api_key: REAL_KEYS[provider],
      base_url: provider === 'openai' ? `${mock.url}/v1` : mock.url,
    });
});
after(async () => {
  await otlp?.close();
  await mock?.close();
  await app?.close();
});

/** A personal gateway key of `user` for `provider`, created through the API as the user does. */
async function gatewayKey(user: Person, provider: Provider) {
  const name = `laptop-${crypto.randomUUID().slice(0, 8)}`;
  const created = await api(app.url, 'POST', '/api/gateway-keys', {
    auth: user.session,
    body: { name, provider },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return {
    key: created.body.key as string,
    name,
    revoke: async () => {
      const r = await api(app.url, 'DELETE', `/api/gateway-keys/${created.body.id}`, { auth: user.session });
      assert.equal(r.status, 204, JSON.stringify(r.body));
    },
  };
}

async function run(
  c: LaptopCase,
  key: string,
  prompt: string,
  opts: {
    stopWhen?: RegExp;
    stopWhenTrue?: () => Promise<boolean>;
    timeoutMs?: number;
    cwd?: string;
    extraArgs?: string[];
  } = {},
): Promise<LaptopRun> {
  const cli = realCli(c.tool) as { path: string };
  const result = await runLaptopCli(c.tool, cli.path, {
    baseUrl: proxyUrl(),
    key,
    model: c.model,
    prompt,
    otlp: { endpoint: otlp.url, token: key },
    timeoutMs: 60_000,
    ...opts,
  });
  if (process.env.REAL_CLI_DEBUG)
    console.log(c.tool, result.code, result.stdout.slice(-2000), result.stderr.slice(-2000));
  return result;
}

/** The user's assistant rows of today with that message_source, oldest first. */
async function assistantRows(userId: number, source: 'gateway' | 'otel') {
  const { db, t } = app.database;
  return db
    .select()
    .from(t.dailyMessages)
    .where(
      and(
        eq(t.dailyMessages.userId, userId),
        eq(t.dailyMessages.role, 'assistant'),
        eq(t.dailyMessages.messageSource, source),
        eq(t.dailyMessages.date, dayKey(app.clock.now())),
      ),
    )
    .orderBy(t.dailyMessages.id);
}

// LAPTOP_CLI=<tool id> runs one CLI's tests (debugging).
for (const c of CASES.filter((x) => !process.env.LAPTOP_CLI || x.tool === process.env.LAPTOP_CLI)) {
  const cli = realCli(c.tool);
  const skip = 'skip' in cli ? cli.skip : false;
  if (skip) console.log(`# laptop-clis ${c.name}: skipped: ${skip}`);

  describe(`${c.name} on a laptop`, { skip }, () => {
    let user: Person;
    before(async () => {
      user = await person(app, cast.admin.session, 'user', cast.tenantId);
    });

    test('one prompt through a gateway key: reply, one gateway row per call, quota, telemetry accepted and not counted twice', async () => {
      const { key, name } = await gatewayKey(user, c.provider);
      const cwd = mkdtempSync(path.join(os.tmpdir(), 'svc-laptop-project-'));
      // Claude Code: the mock answers with a Write call (auto-accepted edits), then with text. Each
      // answer comes after 2.5 s, so a periodic metrics export (every second) carries the edit's lines
      // while the CLI waits for its second answer: the export at exit alone was once dropped (its
      // shutdown flush is capped at about 2 s) on a loaded CI machine.
      if (c.edit)
        mock.setBehaviour({
          anthropicToolUse: {
            name: 'Write',
            input: { file_path: path.join(cwd, 'hello.txt'), content: 'one\ntwo\nthree\n' },
          },
          responseDelayMs: 2500,
        });
      const callsBefore = mock.requests.length;
      const exportsBefore = otlp.requests.length;
      const result = await run(c, key, `hello from ${c.name}`, {
        cwd,
        ...(c.edit ? { extraArgs: ['--permission-mode', 'acceptEdits'] } : {}),
      }).finally(() => mock.setBehaviour({ anthropicToolUse: undefined, responseDelayMs: 0 }));
      assert.equal(result.timedOut, false);
      assert.equal(result.code, 0, result.stderr.slice(-1000));
      assert.ok(result.result?.turnEnded, 'the CLI ended its turn');
      assert.equal(result.result?.turnError, undefined);
      if (c.edit) assert.equal(readFileSync(path.join(cwd, 'hello.txt'), 'utf8'), 'one\ntwo\nthree\n');

      const calls = mock.requests.slice(callsBefore).filter((r) => c.callPath.test(r.path));
      assert.equal(calls.length, c.edit ? 2 : 1, 'the model calls reached the provider');
      for (const r of mock.requests.slice(callsBefore))
        assert.ok(!JSON.stringify(r.headers).includes(key), 'the gateway key never reaches the provider');

      // Usage: one `gateway` row per call, the user's, the CLI's tool name, the mock's tokens.
      const rows = await waitUntil('gateway rows', async () => {
        const r = await assistantRows(user.id, 'gateway');
        return r.length >= calls.length ? r : undefined;
      });
      assert.equal(rows.length, calls.length, 'one row per model call');
      for (const row of rows) {
        assert.equal(row.toolName, c.toolName);
        assert.equal(row.hostName, `gateway:${name}`);
        assert.equal(row.tenantId, cast.tenantId);
        assert.equal(row.model, c.model);
        assert.equal(row.inputTokens, c.usage.inputTokens);
        assert.equal(row.outputTokens, c.usage.outputTokens);
        assert.equal(row.tokensUsed, c.usage.totalTokens);
      }

      // Telemetry: the CLI's logs and metrics reached the service with the key and were accepted;
      // its request events name the calls the proxy already counted, so no `otel` row is added.
      const exports = await waitUntil(
        'telemetry exports answered',
        async () => {
          const e = otlp.requests.slice(exportsBefore);
          return e.some((r) => r.path === '/v1/logs') && e.some((r) => r.path === '/v1/metrics')
            ? e
            : undefined;
        },
        30_000,
      );
      for (const e of exports) {
        assert.equal(e.headers.authorization, `Bearer ${key}`);
        if (e.path === '/v1/logs' || e.path === '/v1/metrics')
          assert.equal(e.status, 200, `${e.path} accepted`);
      }
      if (process.env.REAL_CLI_DEBUG)
        console.log(
          mock.requests.slice(callsBefore).map((r) => r.path),
          await assistantRows(user.id, 'gateway'),
        );
      assert.deepEqual(
        (await assistantRows(user.id, 'otel')).map((r) => [
          r.model,
          r.inputTokens,
          r.outputTokens,
          r.timestamp,
        ]),
        [],
        'no call counted twice',
      );

      // The quota counted each call once (an `otel` row would have counted it again).
      const quota = await waitUntil('quota settled', async () => {
        const q = await dailyQuotaRow(app, user.id);
        return q && q.requestsReserved === 0 && q.requestsUsed >= calls.length ? q : undefined;
      });
      assert.equal(quota.requestsUsed, calls.length);
      assert.equal(quota.tokensUsed, c.usage.totalTokens * calls.length);
      if (c.edit) {
        // Claude Code's figures for the written file (it counts the trailing newline as a fourth line).
        const { db, t } = app.database;
        const figures = await waitUntil('productivity figures', async () => {
          const [row] = await db
            .select()
            .from(t.otelProductivityDaily)
            .where(eq(t.otelProductivityDaily.userId, user.id));
          return row && row.linesAdded > 0 ? row : undefined;
        });
        assert.equal(figures.tenantId, cast.tenantId);
        assert.equal(figures.linesAdded, 4);
        assert.equal(figures.linesRemoved, 0);
        assert.equal(figures.editsAccepted, 1);
        assert.equal(figures.editsRejected, 0);
      }
    });

    test("over the owner's quota: the proxy refuses the key and the CLI says why", async () => {
      const { key } = await gatewayKey(user, c.provider);
      await setUserQuota(app, cast.admin.session, user.id, { daily_request_quota: 1 });
      const callsBefore = mock.requests.length;
      const quotaRefusalAudited = async () => {
        const refusals = await app.database.sql.query<{ details: string }>(
          "SELECT details FROM audit_logs WHERE action = 'REMOTE_LLM_PROXY_REFUSED' AND user_id = ?",
          [user.id],
        );
        return refusals.some((r) => String(r.details).includes('quota_exceeded'));
      };
      const result = await run(
        c,
        key,
        'one more',
        c.waitsOnQuota ? { stopWhenTrue: quotaRefusalAudited } : { stopWhen: QUOTA_REFUSAL },
      );
      assert.equal(result.timedOut, false);
      assert.equal(
        mock.requests.slice(callsBefore).filter((r) => c.callPath.test(r.path)).length,
        0,
        'nothing reached the provider',
      );
      if (c.waitsOnQuota) {
        // Qwen Code honours the proxy's Retry-After (the end of the quota day) and prints nothing
        // meanwhile: the refusal is seen at the proxy only (its audit row); the CLI was still waiting
        // when the test ended it.
        assert.equal(result.stopped, true, 'Qwen Code was still waiting on the Retry-After');
      } else {
        const shown = `${result.result?.turnError ?? ''}\n${result.stdout}\n${result.stderr}`;
        assert.match(shown, QUOTA_REFUSAL, 'the CLI shows the proxy’s refusal');
      }
      await waitUntil('the audit row of the quota refusal', quotaRefusalAudited);
      await setUserQuota(app, cast.admin.session, user.id, { daily_request_quota: 1000 });
    });

    test('a revoked key stops', async () => {
      const { key, revoke } = await gatewayKey(user, c.provider);
      await revoke();
      const callsBefore = mock.requests.length;
      const result = await run(c, key, 'after revocation', { stopWhen: REVOKED });
      assert.equal(result.timedOut, false);
      assert.equal(mock.requests.slice(callsBefore).filter((r) => c.callPath.test(r.path)).length, 0);
      const shown = `${result.result?.turnError ?? ''}\n${result.stdout}\n${result.stderr}`;
      assert.match(shown, REVOKED, 'the CLI shows the refusal');
    });
  });
}
