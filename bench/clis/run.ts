// Per-CLI turn latency with the real CLIs (issue 9, "Measure"). Real API (+ worker), real agent, the real
// CLI of each tool id (installed by `npm run clis:install`; others are skipped with the reason), the real
// proxy with stored keys, and the mock provider answering instantly. One session per tool id, then
// N chat messages one at a time, each timed from the chat POST to:
//   first line:  the first stdout line of the turn reaching an SSE reader
//   turn end:    the line the tool's adapter recognises as the end of the turn (adapter.inspect), or the
//                agent's `turn_finished` note of a per-turn CLI, reaching the SSE reader
// and split into (from the agent's DEBUG log `CLI fed` and the agent-stamped output events):
//   delivery:    chat POST -> the message reached the agent's session (server, queue, long poll)
//   agent feed:  the session got the message -> the CLI has it on stdin (or is spawned, per-turn CLIs)
//   CLI first:   the CLI has the message -> the agent reads its first stdout line of the turn
//   line -> SSE: the agent reads a line -> the SSE reader has it (agent send, server persist, fan-out)
// Plus the CLI's start-up: process spawned (`started` note) -> its first stdout line.
//
//   npm run bench -- clis [--turns 20] [--tools cli_beta,cli_gamma]
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EventSource } from 'eventsource';
import { getAdapter } from '../../agent/adapters.ts';
import { CLI_PACKAGES } from '../../agent/cli-packages.ts';
import { findTemporalCli } from '../../bin/temporal-cli.ts';
import { startDevServer } from '../../bin/temporal-dev.ts';
import { startMockProvider } from '../../test/fixtures/mock-provider.ts';
import { createTenant } from '../../test/support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../test/support/harness.ts';
import { realCli } from '../../test/support/real-clis.ts';
import { registrationToken, startAgent, waitUntil } from '../../test/support/remote.ts';
import { api, login, type Session } from '../../test/support/session.ts';

const argv = process.argv.slice(2);
const flag = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const TURNS = Number(flag('--turns')) || 20;
const TOOLS = flag('--tools')?.split(',') ?? Object.keys(CLI_PACKAGES);
const TURN_TIMEOUT_MS = 60_000;
const now = () => performance.timeOrigin + performance.now();

interface Turn {
  firstLine: number;
  turnEnd: number;
  delivery: number;
  agentFeed: number;
  cliFirst: number;
  lineToSse: number;
}

interface ToolResult {
  tool: string;
  skipped?: string;
  failed?: string;
  turns: Turn[];
  startup: number[];
}

function p50(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.ceil(0.5 * s.length) - 1]! : NaN;
}

/** `CLI fed` entries of the agent's DEBUG log, in order. */
function fedEntries(logs: string[]): { received_ms?: number; fed_ms: number }[] {
  return logs
    .join('')
    .split('\n')
    .filter((l) => l.includes('"CLI fed"'))
    .map((l) => JSON.parse(l));
}

async function measure(app: TestApp, admin: Session, tenantId: number, tool: string): Promise<ToolResult> {
  const cli = realCli(tool);
  if ('skip' in cli) return { tool, skipped: cli.skip, turns: [], startup: [] };
  const adapter = getAdapter(tool);
  // Each CLI gets a scratch HOME (its settings, transcripts and caches), like a fresh user.
  const realHome = process.env.HOME;
  process.env.HOME = mkdtempSync(path.join(os.tmpdir(), `svc-bench-home-${tool}-`));
  const agent = startAgent({
    serverUrl: app.url,
    registrationToken: await registrationToken(app.url, admin, tenantId),
    extra: { cli_tool: tool, cli_path: cli.path, cli_env: {}, log_level: 'DEBUG', heartbeat_interval: 5 },
  });
  process.env.HOME = realHome;
  let es: EventSource | undefined;
  const result: ToolResult = { tool, turns: [], startup: [] };
  try {
    const machineId: string = await waitUntil(
      'agent registration',
      async () => agent.config().machine_id,
      30000,
    );
    await waitUntil(
      'machine online',
      async () =>
        (await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: admin })).body.status ===
        'online',
      30000,
    );
    const created = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: admin,
      body: {
        machine_id: machineId,
        cli_tool: tool,
        project_path: mkdtempSync(path.join(os.tmpdir(), 'svc-bench-project-')),
      },
    });
    if (created.status !== 201)
      throw new Error(`create session: ${created.status} ${JSON.stringify(created.body)}`);
    const sessionId: string = created.body.session_id;

    // Every output event with the time the SSE reader got it.
    const seen: { at: number; stream: string; data: string; timestamp: string }[] = [];
    es = new EventSource(`${app.url}/api/remote/sessions/${sessionId}/output/stream`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), ...admin.headers },
        }),
    });
    es.addEventListener('output', (e) => seen.push({ at: now(), ...JSON.parse(e.data) }));
    const note = (e: { stream: string; data: string }) => {
      if (e.stream !== 'system') return undefined;
      try {
        return JSON.parse(e.data) as { event?: string; [k: string]: unknown };
      } catch {
        return undefined;
      }
    };
    const ends = (e: { stream: string; data: string }) => {
      if (e.stream === 'stdout' && e.data.startsWith('{')) {
        try {
          return adapter.inspect(JSON.parse(e.data)).turnEnded === true;
        } catch {
          return false;
        }
      }
      return ['turn_finished', 'turn_error', 'turn_stalled', 'exited'].includes(note(e)?.event ?? '');
    };

    for (let i = 0; i <= TURNS; i++) {
      const from = seen.length;
      const fedBefore = fedEntries(agent.logs).length;
      const sentAt = now();
      const r = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
        auth: admin,
        body: { content: `say hi ${i}` },
      });
      if (r.status !== 200) throw new Error(`chat: ${r.status} ${JSON.stringify(r.body)}`);
      const end = await waitUntil(
        `end of turn ${i}`,
        async () => seen.slice(from).find(ends),
        TURN_TIMEOUT_MS,
        5,
      );
      const failure = note(end);
      if (failure?.event === 'turn_error' || failure?.event === 'turn_stalled' || failure?.event === 'exited')
        throw new Error(`turn ${i}: ${failure.event}: ${failure.message}`);
      // A per-turn CLI's process exits after its turn-end line: wait for that, so the next turn's
      // window does not start with this turn's `turn_finished` note.
      if (adapter.mode === 'per_turn')
        await waitUntil(
          `turn ${i} process exit`,
          async () => seen.slice(from).some((e) => note(e)?.event === 'turn_finished'),
          TURN_TIMEOUT_MS,
          5,
        );
      const turnEvents = seen.slice(from, seen.indexOf(end) + 1);
      const first = turnEvents.find((e) => e.stream === 'stdout');
      if (!first) {
        const said = turnEvents.filter((e) => e.stream !== 'stdout').map((e) => e.data.slice(0, 200));
        throw new Error(`turn ${i} ended without a stdout line: ${said.slice(-3).join(' | ')}`);
      }
      const fed = await waitUntil('CLI fed log', async () => fedEntries(agent.logs)[fedBefore], 5000);
      for (const e of turnEvents) {
        const started = note(e);
        if (started?.event !== 'started') continue;
        const firstLine = seen.slice(seen.indexOf(e)).find((x) => x.stream === 'stdout');
        if (firstLine) result.startup.push(Date.parse(firstLine.timestamp) - Date.parse(e.timestamp));
      }
      if (i === 0) continue; // warm-up: the first turn of a stream CLI includes its start-up
      result.turns.push({
        firstLine: first.at - sentAt,
        turnEnd: end.at - sentAt,
        delivery: (fed.received_ms ?? fed.fed_ms) - sentAt,
        agentFeed: fed.received_ms !== undefined ? fed.fed_ms - fed.received_ms : NaN,
        cliFirst: Date.parse(first.timestamp) - fed.fed_ms,
        lineToSse: first.at - Date.parse(first.timestamp),
      });
    }
    // A stream CLI started before the first message: its start-up is the session's first started note.
    const started = seen.find((e) => note(e)?.event === 'started');
    if (started && result.startup.length === 0) {
      const firstLine = seen.slice(seen.indexOf(started)).find((x) => x.stream === 'stdout');
      if (firstLine) result.startup.push(Date.parse(firstLine.timestamp) - Date.parse(started.timestamp));
    }
    await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, { auth: admin });
  } catch (err) {
    result.failed = (err as Error).message;
  } finally {
    es?.close();
    await agent.stop();
  }
  return result;
}

const fmt = (n: number) => (Number.isNaN(n) ? '    n/a' : n.toFixed(1).padStart(7));

async function main() {
  const cliPath = await findTemporalCli({
    explicit: process.env.TEMPORAL_CLI_PATH,
    log: (l) => process.stderr.write(`${l}\n`),
  });
  const dev = await startDevServer({ cliPath, ephemeralPorts: true, inMemory: true });
  process.env.TEST_TEMPORAL_ADDRESS = dev.address;
  const mock = await startMockProvider();
  const app = await startTestApp({ worker: true });
  const results: ToolResult[] = [];
  try {
    const admin = await login(app.url, ADMIN.username, ADMIN.password);
    const tenantId = await createTenant(app, admin);
    for (const provider of ['openai', 'anthropic', 'gemini']) {
      const r = await api(app.url, 'POST', '/api/remote/api-keys', {
        auth: admin,
        body: {
          provider,
          key_name: `bench ${provider}`,
          api_key: `real-${provider}-key`,
          base_url: provider === 'openai' ? `${mock.url}/v1` : mock.url,
          tenant_id: tenantId,
        },
      });
      if (r.status !== 201) throw new Error(`store key: ${r.status} ${JSON.stringify(r.body)}`);
    }
    process.stderr.write(
      `clis bench: ${TURNS} turns per CLI (+1 warm-up), ${os.cpus().length} CPUs, Node ${process.version}\n`,
    );
    for (const tool of TOOLS) {
      process.stderr.write(`  ${tool} ...\n`);
      results.push(await measure(app, admin, tenantId, tool));
    }
  } finally {
    await app.close();
    await mock.close();
    await dev.stop();
  }
  console.log(`\nReal CLIs, mock provider answering instantly: p50 over ${TURNS} turns (ms)`);
  console.log(
    `${'tool'.padEnd(10)} ${'first line'.padStart(10)} ${'turn end'.padStart(9)} ${'delivery'.padStart(9)} ${'agent feed'.padStart(10)} ${'CLI first'.padStart(9)} ${'line->SSE'.padStart(9)} ${'CLI start-up'.padStart(12)}`,
  );
  for (const r of results) {
    if (r.skipped || r.failed) {
      console.log(`${r.tool.padEnd(10)} ${r.skipped ? 'skipped' : 'failed'}: ${r.skipped ?? r.failed}`);
      continue;
    }
    const col = (k: keyof Turn) => p50(r.turns.map((t) => t[k]));
    console.log(
      `${r.tool.padEnd(10)} ${fmt(col('firstLine')).padStart(10)} ${fmt(col('turnEnd')).padStart(9)} ${fmt(col('delivery')).padStart(9)} ${fmt(col('agentFeed')).padStart(10)} ${fmt(col('cliFirst')).padStart(9)} ${fmt(col('lineToSse')).padStart(9)} ${fmt(p50(r.startup)).padStart(12)}`,
    );
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
