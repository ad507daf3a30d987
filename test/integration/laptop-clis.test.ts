// The four real CLIs on a developer's laptop (issue 29, item 3): each runs one prompt as a user runs it
// (test/support/laptop-cli.ts: a temp HOME, no agent, the CLI's own variables and config files point
// it at the service's model proxy with the user's credential); the proxy swaps in the tenant's stored
// provider key and forwards to the mock provider (the only fake). Checks, per CLI: the reply, the real
// key at the provider, one assistant usage row per model call for the user with the mock's tokens,
// the quota counters, nothing counted twice, the telemetry export carrying the credential; and that a
// credential over quota, or revoked, is refused by the proxy with the CLI's own error output showing it.
// A CLI that is not installed skips with the reason.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { LLM_PROXY_PREFIX } from '../../api/routes/remote/llm-proxy.ts';
import { dayKey } from '../../domain/quota.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { MOCK_EXPECTED_USAGE, type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { type LaptopRun, type OtlpCapture, runLaptopCli, startOtlpCapture } from '../support/laptop-cli.ts';
import { setUserQuota } from '../support/quota.ts';
import { storeProviderKey } from '../support/real-cli-session.ts';
import { realCli } from '../support/real-clis.ts';
import { buildRemoteCast, type Person, person, type RemoteCast, waitUntil } from '../support/remote.ts';

type Provider = 'anthropic' | 'openai' | 'gemini';

interface LaptopCase {
  tool: string;
  name: string;
  provider: Provider;
  model: string;
  /** The provider path of its model call and the mock's usage of one such call. */
  callPath: RegExp;
  usage: (typeof MOCK_EXPECTED_USAGE)[keyof typeof MOCK_EXPECTED_USAGE];
  /** Qwen Code retries a 429 in a loop of its own (7 attempts with backoff) before it prints the error. */
  refusalTimeoutMs?: number;
}

const CASES: LaptopCase[] = [
  {
    tool: 'cli_beta',
    name: 'Claude Code',
    provider: 'anthropic',
    model: 'claude-mock-1',
    callPath: /^\/v1\/messages(\?|$)/,
    usage: MOCK_EXPECTED_USAGE['anthropic-messages'],
  },
  {
    tool: 'cli_gamma',
    name: 'Codex',
    provider: 'openai',
    model: 'gpt-mock-1',
    callPath: /^\/v1\/responses$/,
    usage: MOCK_EXPECTED_USAGE['openai-responses'],
  },
  {
    tool: 'cli_delta',
    name: 'Gemini CLI',
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    callPath: /:streamGenerateContent/,
    usage: MOCK_EXPECTED_USAGE['gemini-generate'],
  },
  {
    tool: 'cli_alpha',
    name: 'Qwen Code',
    provider: 'openai',
    model: 'qwen-mock-1',
    callPath: /^\/v1\/chat\/completions$/,
    usage: MOCK_EXPECTED_USAGE['openai-chat'],
    refusalTimeoutMs: 150_000,
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
  otlp = await startOtlpCapture();
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

/**
 * The laptop's credential for `provider`: a proxy token bound to `user` and that provider, issued the
 * way a session's is (the credential the proxy checks today; personal gateway keys take its place).
 */
async function credential(
  user: Person,
  provider: Provider,
): Promise<{ key: string; revoke(): Promise<void> }> {
  const tokens = proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });
  const sessionId = crypto.randomUUID();
  const { db, t } = app.database;
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId: cast.tenantId,
    toolName: 'laptop',
    hostName: 'laptop',
    userId: user.id,
    status: 'active',
    workspaceType: 'remote',
    remoteMachineId: 'laptop',
  });
  const { token } = await tokens.issue({ sessionId, userId: user.id, tenantId: cast.tenantId, provider });
  return { key: token, revoke: () => tokens.revokeForSession(sessionId, 'stopped').then(() => undefined) };
}

async function run(
  c: LaptopCase,
  key: string,
  prompt: string,
  stopWhen?: RegExp,
  timeoutMs = 60_000,
): Promise<LaptopRun> {
  const cli = realCli(c.tool) as { path: string };
  const result = await runLaptopCli(c.tool, cli.path, {
    baseUrl: proxyUrl(),
    key,
    model: c.model,
    prompt,
    otlp: { endpoint: otlp.url, token: key },
    timeoutMs,
    ...(stopWhen ? { stopWhen } : {}),
  });
  if (process.env.REAL_CLI_DEBUG)
    console.log(c.tool, result.code, result.stdout.slice(-2000), result.stderr.slice(-2000));
  return result;
}

/** The user's assistant rows of today, oldest first. */
async function assistantRows(userId: number) {
  const { db, t } = app.database;
  return db
    .select()
    .from(t.dailyMessages)
    .where(
      and(
        eq(t.dailyMessages.userId, userId),
        eq(t.dailyMessages.role, 'assistant'),
        eq(t.dailyMessages.date, dayKey(app.clock.now())),
      ),
    )
    .orderBy(t.dailyMessages.id);
}

async function dailyQuota(userId: number) {
  const { db, t } = app.database;
  const [row] = await db
    .select()
    .from(t.quotaUsage)
    .where(
      and(
        eq(t.quotaUsage.userId, userId),
        eq(t.quotaUsage.period, 'daily'),
        eq(t.quotaUsage.date, dayKey(app.clock.now())),
      ),
    );
  return row;
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

    test('one prompt through the proxy: reply, real key upstream, one usage row per call, quota counted, telemetry sent', async () => {
      const { key } = await credential(user, c.provider);
      const callsBefore = mock.requests.length;
      const exportsBefore = otlp.requests.length;
      const result = await run(c, key, `hello from ${c.name}`);
      assert.equal(result.timedOut, false);
      assert.equal(result.code, 0, result.stderr.slice(-1000));
      assert.ok(result.result?.turnEnded, 'the CLI ended its turn');
      assert.equal(result.result?.turnError, undefined);

      const calls = mock.requests.slice(callsBefore).filter((r) => c.callPath.test(r.path));
      assert.ok(calls.length >= 1, 'the model call reached the provider');
      for (const r of mock.requests.slice(callsBefore))
        assert.ok(
          !JSON.stringify(r.headers).includes(key),
          'the laptop credential never reaches the provider',
        );

      const rows = await waitUntil('usage rows', async () => {
        const r = await assistantRows(user.id);
        return r.length >= calls.length ? r : undefined;
      });
      assert.equal(rows.length, calls.length, 'one row per model call, nothing counted twice');
      for (const row of rows) {
        assert.equal(row.inputTokens, c.usage.inputTokens);
        assert.equal(row.outputTokens, c.usage.outputTokens);
        assert.equal(row.tokensUsed, c.usage.totalTokens);
        assert.equal(row.tenantId, cast.tenantId);
      }
      const quota = await waitUntil('quota settled', async () => {
        const q = await dailyQuota(user.id);
        return q && q.requestsReserved === 0 && q.requestsUsed >= calls.length ? q : undefined;
      });
      assert.equal(quota.requestsUsed, calls.length);
      assert.equal(quota.tokensUsed, c.usage.totalTokens * calls.length);

      const exports = await waitUntil('telemetry export', async () => {
        const e = otlp.requests.slice(exportsBefore);
        return e.some((r) => r.path === '/v1/logs') && e.some((r) => r.path === '/v1/metrics')
          ? e
          : undefined;
      });
      for (const e of exports) assert.equal(e.headers.authorization, `Bearer ${key}`);
    });

    test('over quota: the proxy refuses and the CLI says why', async () => {
      const { key } = await credential(user, c.provider);
      await setUserQuota(app, cast.admin.session, user.id, { daily_request_quota: 1 });
      const callsBefore = mock.requests.length;
      const result = await run(c, key, 'one more', QUOTA_REFUSAL, c.refusalTimeoutMs);
      assert.equal(result.timedOut, false);
      assert.equal(
        mock.requests.slice(callsBefore).filter((r) => c.callPath.test(r.path)).length,
        0,
        'nothing reached the provider',
      );
      const shown = `${result.result?.turnError ?? ''}\n${result.stdout}\n${result.stderr}`;
      assert.match(shown, QUOTA_REFUSAL, 'the CLI shows the proxy’s refusal');
      await setUserQuota(app, cast.admin.session, user.id, { daily_request_quota: 1000 });
    });

    test('a revoked credential stops', async () => {
      const { key, revoke } = await credential(user, c.provider);
      await revoke();
      const callsBefore = mock.requests.length;
      const result = await run(c, key, 'after revocation', REVOKED);
      assert.equal(result.timedOut, false);
      assert.equal(mock.requests.slice(callsBefore).filter((r) => c.callPath.test(r.path)).length, 0);
      const shown = `${result.result?.turnError ?? ''}\n${result.stdout}\n${result.stderr}`;
      assert.match(shown, REVOKED, 'the CLI shows the refusal');
    });
  });
}
