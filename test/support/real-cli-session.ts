// The steps every real-CLI end-to-end test takes (test/integration/real-cli-*.test.ts), one function
// each, so a test file keeps only what differs between CLIs (tool id, provider, key, turn shape):
//   storeProviderKey  a system admin stores the tenant's provider key (base URL = the mock provider);
//   startRealCliSession  a real agent registers, comes online and is assigned to userA, who opens a
//                     session on the real CLI;
//   sessionLines      the session output read back as parsed JSON lines of the CLI and the agent;
//   meteredUsage      waits until the proxy has counted the calls in userA's quota and daily_usage;
//   offlineCliRun, assertOfflineFailure  the CLI alone, as the agent starts it, with the proxy
//                     address closed, under strace: it must fail and try no other address.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { buildCliEnv, getAdapter } from '../../agent/adapters.ts';
import { dayKey } from '../../domain/quota.ts';
import type { MockProvider } from '../fixtures/mock-provider.ts';
import { foreignConnects, type TracedRun, traceConnects } from './connect-trace.ts';
import type { TestApp } from './harness.ts';
import {
  type AgentProcess,
  assign,
  type RemoteCast,
  registrationToken,
  sessionOutput,
  startAgent,
  waitUntil,
} from './remote.ts';
import { api } from './session.ts';

export async function storeProviderKey(
  app: TestApp,
  cast: RemoteCast,
  key: { provider: string; key_name: string; api_key: string; base_url: string },
): Promise<void> {
  const stored = await api(app.url, 'POST', '/api/remote/api-keys', {
    auth: cast.admin.session,
    body: { ...key, tenant_id: cast.tenantId },
  });
  assert.equal(stored.status, 201, JSON.stringify(stored.body));
}

export interface RealCliSession {
  agent: AgentProcess;
  machineId: string;
  sessionId: string;
}

/**
 * Starts the real agent with `agentConfig` (cli_tool, cli_path, ...), waits until it is registered and
 * online, assigns userA to the machine and creates userA's session. `cliTool` undefined leaves the
 * session request without cli_tool (the default tool).
 */
export async function startRealCliSession(
  app: TestApp,
  cast: RemoteCast,
  opts: { agentConfig: Record<string, unknown>; cliTool?: string; model: string; projectPath: string },
): Promise<RealCliSession> {
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const agent = startAgent({ serverUrl: app.url, registrationToken: token, extra: opts.agentConfig });
  const machineId = await waitUntil('agent registration', async () => agent.config().machine_id, 20_000);
  await waitUntil('machine online', async () => {
    const r = await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.admin.session });
    return r.body?.status === 'online';
  });
  assert.equal((await assign(app.url, cast.admin.session, machineId, cast.userA.id, 'user')).status, 200);
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: {
      machine_id: machineId,
      project_path: opts.projectPath,
      model: opts.model,
      ...(opts.cliTool ? { cli_tool: opts.cliTool } : {}),
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { agent, machineId, sessionId: created.body.session_id };
}

/** JSON text to a value; anything unparsable becomes `{}` (CLIs print the odd non-JSON line). */
export const parseJson = (data: string): any => {
  try {
    return JSON.parse(data);
  } catch {
    return {};
  }
};

/** The JSON lines a CLI printed on stdout (lines that start with `{`). */
export const jsonLinesOf = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map(parseJson);

/**
 * Reads a session's output back: the CLI's stdout lines of a type, the agent's notes of an event.
 * `ctx` is read on every call, so a test file can build this before its `before` hook has run.
 */
export function sessionLines(ctx: () => { app: TestApp; cast: RemoteCast; sessionId: string }) {
  const output = () => {
    const { app, cast, sessionId } = ctx();
    return sessionOutput(app.url, cast.userA.session, sessionId);
  };
  const stream = async (name: string) =>
    (await output()).filter((e) => e.stream === name).map((e) => parseJson(e.data));
  return {
    output,
    /** Every parsed line of a stream (`stdout`, `system`, ...), in order. */
    stream,
    /** The CLI's stdout JSON lines whose `type` is `type`, in order. */
    cliLines: async (type: string) => (await stream('stdout')).filter((d) => d.type === type),
    /** The agent's notes whose `event` is `event`, in order. */
    agentNotes: async (event: string) => (await stream('system')).filter((d) => d.event === event),
    /** userA sends `content` to the session (200 expected). */
    chat: async (content: string) => {
      const { app, cast, sessionId } = ctx();
      const r = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
        auth: cast.userA.session,
        body: { content },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    },
  };
}

/** The provider requests of the mock whose path matches, from index `from` on. */
export const providerCalls = (mock: MockProvider, path: RegExp, from = 0) =>
  mock.requests.slice(from).filter((r) => path.test(r.path));

/** A local port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * Waits until the proxy has settled `calls` requests into userA's daily quota row (nothing left
 * reserved) and the tool's daily_usage row of the tenant has at least `minTokens`; returns both rows.
 */
export async function meteredUsage(
  app: TestApp,
  cast: RemoteCast,
  toolName: string,
  calls: number,
  minTokens: number,
) {
  const { db, t } = app.database;
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
    return row && row.requestsUsed >= calls && row.requestsReserved === 0 ? row : undefined;
  });
  const daily = await waitUntil('daily usage', async () => {
    const [row] = await db
      .select()
      .from(t.dailyUsage)
      .where(and(eq(t.dailyUsage.tenantId, cast.tenantId), eq(t.dailyUsage.toolName, toolName)));
    return row && row.tokensUsed >= minTokens ? row : undefined;
  });
  return { quota, daily };
}

/**
 * Runs a CLI once, as the agent would start it (its adapter's arguments, environment and, where the
 * adapter has one, session folder; plus `env`), with the proxy address closed, under strace. Tests
 * with a slow CLI start it in `before` and await it in their last test, so the CLI's own retry loop
 * overlaps the end-to-end tests.
 */
export async function offlineCliRun(
  cliTool: string,
  cliPath: string,
  opts: { model?: string; timeoutMs: number; env?: Record<string, string> },
): Promise<{ run: TracedRun; port: number }> {
  const adapter = getAdapter(cliTool);
  const port = await closedPort();
  const proxy = `http://127.0.0.1:${port}/api/remote/llm-proxy`;
  const sessionEnv = adapter.prepareSessionDir
    ? adapter.prepareSessionDir(mkdtempSync(path.join(os.tmpdir(), `svc-${cliTool}-state-`)), proxy)
    : {};
  const env = buildCliEnv(adapter, process.env, 'svcpt_unreachable', proxy, { ...sessionEnv, ...opts.env });
  const run = await traceConnects(cliPath, adapter.startArgs(opts.model), {
    env,
    cwd: mkdtempSync(path.join(os.tmpdir(), `svc-${cliTool}-offline-`)),
    stdin: adapter.formatInput('hello?'),
    timeoutMs: opts.timeoutMs,
  });
  return { run, port };
}

/** The offline run gave up by itself with a result line the adapter reads as a turn error matching
 * `error`, tried the proxy, and connected to no other address. */
export function assertOfflineFailure(
  cliTool: string,
  { run, port }: { run: TracedRun; port: number },
  error: RegExp,
) {
  assert.equal(run.timedOut, false, 'the CLI gave up by itself');
  const result = jsonLinesOf(run.stdout).find((e) => e.type === 'result');
  assert.ok(result, `a result line: ${run.stdout.slice(-500)} ${run.stderr.slice(-500)}`);
  const info = getAdapter(cliTool).inspect(result);
  assert.equal(info.turnEnded, true);
  assert.match(info.turnError ?? '', error, 'the agent sees a turn error');
  assert.ok(
    run.connects.some((c) => c.port === port),
    'it did try the proxy',
  );
  assert.deepEqual(foreignConnects(run, [`127.0.0.1:${port}`]), [], 'no connection to any other address');
}
