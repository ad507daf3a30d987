// bench/remote --agents N (issue 31 item 4): what N idle agents cost one API instance (SQLite) or two
// (PostgreSQL), and what they do to the chat path, against the same stack with one agent, in one run.
//
// The API runs as its own process (bin/api.ts, as `npm run api`; two of them on PostgreSQL), so its
// memory and CPU are its own: resident set and peak (/proc/<pid>/status VmRSS, VmHWM) and CPU time
// (/proc/<pid>/stat utime + stime, the counter process.cpuUsage() reads), per second of wall time.
// The Temporal worker runs in this bench process, stopped once the sessions run (it only starts them). One real agent
// (agent/main.ts) runs SESSIONS sessions on stamp-cli.mjs; the N-1 idle agents are real registered
// machines with their own tokens, polling through the agent's own Poller (idle-agents.ts, a process
// of their own). Phases, first with the one agent, then again with the N-1 idle agents added:
//   idle:  nobody chats for --idle-seconds; the API's CPU and memory;
//   chat:  every session sends --messages messages, one at a time, all sessions at once;
//          chat -> agent (POST sent -> the CLI read it) and stdout -> SSE (the CLI printed -> an SSE
//          reader on the other instance has it), and the API's CPU meanwhile.
//
//   npm run bench -- remote --agents 1000 [--sessions 20] [--messages 25] [--idle-seconds 20]
//   DATABASE_URL=postgres://... npm run bench -- remote --agents 1000      (two API instances)
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EventSource } from 'eventsource';
import { bootstrapAdmin } from '../../bin/bootstrap-admin.ts';
import { runWorker } from '../../bin/runtime.ts';
import type { RunningWorker } from '../../bin/worker-runtime.ts';
import { loadSettings } from '../../config/settings.ts';
import { openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import { createTestDatabase, usingPostgres } from '../../test/support/database.ts';
import { ADMIN } from '../../test/support/harness.ts';
import { api, login } from '../../test/support/session.ts';
import { apiUrl, launchSvc, type SvcProcess, stopSvcProcesses } from '../../test/support/svc-processes.ts';
import { onlineMachine } from '../support/remote-machine.ts';
import { machine, percentile } from '../support/stats.ts';
import { startBenchTemporal } from '../support/temporal.ts';
import { readStampedLines } from './stamped-lines.ts';

const HERE = import.meta.dirname;
const STAMP_CLI = path.join(HERE, 'stamp-cli.mjs');
const IDLE_AGENTS = path.join(HERE, 'idle-agents.ts');
const BUNDLE_CACHE = path.resolve('node_modules/.cache/svc');
const argv = process.argv.slice(2);
const flag = (name: string, def: number) =>
  argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : def;
const AGENTS = flag('--agents', 1000);
const SESSIONS = flag('--sessions', 20);
const MESSAGES = flag('--messages', 25);
const IDLE_S = flag('--idle-seconds', 20);
/** After the idle agents registered: one full long-poll cycle (25 s) so that they are in steady state. */
const SETTLE_S = flag('--settle-seconds', 30);
const CLI_DELAY_MS = flag('--cli-delay', 0);
/** The agents' heartbeat request interval: the agent's default (agent/config.ts). */
const HEARTBEAT_S = 60;
const now = () => performance.timeOrigin + performance.now();

/** CPU seconds (user + system) and memory of a process, from /proc (Linux). */
function processFacts(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return {
    cpuS: (Number(f[11]) + Number(f[12])) / 100,
    rssMb: kb('VmRSS') / 1024,
    peakMb: kb('VmHWM') / 1024,
  };
}

/** Requests the API instances have answered so far (their /metrics request-duration counts). */
async function requestsAnswered(urls: string[]): Promise<number> {
  let total = 0;
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const line of text.split('\n'))
      if (line.startsWith('http_request_duration_seconds_count{')) total += Number(line.split(' ').pop());
  }
  return total;
}

/** The API processes' CPU (% of one core) over `run`, and their memory at its end. */
async function measured<T>(pids: number[], run: () => Promise<T>) {
  const before = pids.map(processFacts);
  const t0 = performance.now();
  const result = await run();
  const seconds = (performance.now() - t0) / 1000;
  const after = pids.map(processFacts);
  return {
    result,
    cpuPct: after.map((a, i) => ((a.cpuS - before[i]!.cpuS) / seconds) * 100),
    rssMb: after.map((a) => a.rssMb),
    peakMb: after.map((a) => a.peakMb),
  };
}

interface PhaseResult {
  agents: number;
  idle: Awaited<ReturnType<typeof measured>>;
  /** Requests answered during the idle phase (all instances). */
  idleRequests: number;
  chat: Awaited<ReturnType<typeof measured>>;
  chatToAgent: number[];
  stdoutToSse: number[];
  /** Messages whose reply did not come within 60 s. */
  late: number;
  loadavg: string;
}

interface Line {
  received_at: number;
  printed_at: number;
  sseAt: number;
}

async function scenario(name: string, instances: 1 | 2) {
  const dev = await startBenchTemporal();
  const testDb = await createTestDatabase();
  const database = await openDatabase({
    databaseUrl: testDb.databaseUrl ?? '',
    sqlitePath: testDb.sqlitePath,
  });
  const env = {
    DATABASE_URL: testDb.databaseUrl ?? '',
    SVC_DATA_DIR: testDb.dataDir,
    TEMPORAL_ADDRESS: dev.address,
    TEMPORAL_TASK_QUEUE: `bench-${randomBytes(4).toString('hex')}`,
    // launchSvc's keys: the worker here must read what the API processes encrypt.
    SVC_ENCRYPTION_KEY: 'scale-encryption-key',
    SECRET_KEY: 'scale-secret-key',
  };
  const apis: SvcProcess[] = [];
  const sse: EventSource[] = [];
  let worker: RunningWorker | undefined;
  let idle: ChildProcess | undefined;
  let agentStop: (() => Promise<void>) | undefined;
  try {
    await upgrade(database, 'head');
    await bootstrapAdmin(database, ADMIN, () => {});
    worker = await runWorker(loadSettings(env), dev.address, database, () => {}, BUNDLE_CACHE);
    for (let i = 0; i < instances; i++) apis.push(launchSvc(`api-${'ab'[i]}`, 'api', env));
    const urls = await Promise.all(apis.map((p) => apiUrl(p)));
    const pids = apis.map((p) => p.child.pid!);
    const [a, b] = [urls[0]!, urls[instances - 1]!];
    const admin = await login(b, ADMIN.username, ADMIN.password);

    // The one real agent polls A; its sessions' chat and SSE go through B.
    const remote = await onlineMachine({
      url: b,
      auth: admin.headers,
      agentUrl: a,
      extra: {
        cli_path: STAMP_CLI,
        cli_env: { STAMP_DELAY_MS: String(CLI_DELAY_MS) },
        log_level: 'WARNING',
        heartbeat_interval: HEARTBEAT_S,
        max_sessions: SESSIONS,
      },
    });
    agentStop = () => remote.agent.stop();
    const waiters = new Map<string, (line: Line) => void>();
    const sessionIds: string[] = [];
    for (let s = 0; s < SESSIONS; s++) {
      const id = await remote.createSession();
      sessionIds.push(id);
      sse.push(readStampedLines(b, id, admin.headers, (line) => waiters.get(line.bench)?.(line)));
    }

    const chat = async (sessionId: string, content: string): Promise<Line & { sentAt: number }> => {
      const reply = new Promise<Line>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no reply to ${content} within 60 s`)), 60_000);
        waiters.set(content, (l) => {
          clearTimeout(timer);
          resolve(l);
        });
      });
      // The POST may outlast the reply's timer: its rejection is seen below, never as an unhandled one.
      reply.catch(() => undefined);
      const sentAt = now();
      const r = await api(b, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
        auth: admin,
        body: { content },
      });
      if (r.status !== 200) throw new Error(`chat: ${r.status} ${JSON.stringify(r.body)}`);
      const line = await reply;
      waiters.delete(content);
      return { ...line, sentAt };
    };

    // Every session's CLI started (the first message waits for it); then the worker stops: it only
    // starts sessions, and on SQLite a second process writing the file (not a supported deployment)
    // would hold the API's writes up behind its lock (busy_timeout) in the middle of the measurement.
    await Promise.all(sessionIds.map((id, s) => chat(id, `start-${s}`)));
    await worker.stop();
    worker = undefined;

    const phase = async (agents: number): Promise<PhaseResult> => {
      const answeredBefore = await requestsAnswered(urls);
      const idleRun = await measured(pids, () => sleep(IDLE_S * 1000));
      // The idle agents' requests per second, and what each cost: what an idle-CPU change acts on.
      const idleRequests = (await requestsAnswered(urls)) - answeredBefore - urls.length;
      // One warm-up message per session (the first one also waits for the CLI to start).
      await Promise.all(sessionIds.map((id, s) => chat(id, `w${agents}-${s}`)));
      const chatToAgent: number[] = [];
      const stdoutToSse: number[] = [];
      let late = 0;
      const chatRun = await measured(pids, () =>
        Promise.all(
          sessionIds.map(async (id, s) => {
            for (let i = 0; i < MESSAGES; i++) {
              // A reply that never came counts as an infinite chat -> agent (and in `late`), not as a
              // crash of the whole run.
              const l = await chat(id, `a${agents}-s${s}-m${i}`).catch(() => undefined);
              if (!l) late += 1;
              chatToAgent.push(l ? l.received_at - l.sentAt : Number.POSITIVE_INFINITY);
              if (l) stdoutToSse.push(l.sseAt - l.printed_at);
            }
          }),
        ),
      );
      process.stderr.write(`  ${name}: ${agents} agent(s) measured\n`);
      return {
        agents,
        idle: idleRun,
        idleRequests,
        chat: chatRun,
        chatToAgent,
        stdoutToSse,
        late,
        loadavg: os.loadavg()[0]!.toFixed(1),
      };
    };

    const results = [await phase(1)];
    if (AGENTS > 1) {
      const tokens: string[] = [];
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (tokens.length < AGENTS - 1) {
            tokens.push('');
            const r = await api(b, 'POST', '/api/remote/machines/register', {
              auth: admin,
              body: { tenant_id: remote.tenantId },
            });
            if (r.status !== 201)
              throw new Error(`registration token: ${r.status} ${JSON.stringify(r.body)}`);
            tokens[tokens.indexOf('')] = r.body.registration_token;
          }
        }),
      );
      idle = spawn(process.execPath, ['--import', 'tsx', IDLE_AGENTS], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      idle.stdin!.end(`${JSON.stringify({ urls, tokens, heartbeat_s: HEARTBEAT_S })}\n`);
      const child = idle;
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', () => resolve());
        child.once('exit', (code) => reject(new Error(`idle agents exited (${code})`)));
      });
      process.stderr.write(
        `  ${name}: ${AGENTS - 1} idle agents registered and polling in ${((performance.now() - started) / 1000).toFixed(0)} s; settling ${SETTLE_S} s\n`,
      );
      await sleep(SETTLE_S * 1000);
      results.push(await phase(AGENTS));
    }
    return results;
  } finally {
    for (const es of sse) es.close();
    if (idle && idle.exitCode === null) {
      const child = idle;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await agentStop?.();
    await stopSvcProcesses(apis);
    await worker?.stop();
    await database.close();
    await testDb.drop();
    await dev.stop();
  }
}

const f1 = (n: number) => n.toFixed(1);
const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
const each = (xs: number[]) => (xs.length > 1 ? ` (${xs.map((x) => x.toFixed(0)).join('+')})` : '');

async function main() {
  const db = usingPostgres() ? 'PostgreSQL, two API instances' : 'SQLite, one API instance';
  process.stderr.write(
    `remote bench, ${AGENTS} agents: ${SESSIONS} sessions x ${MESSAGES} messages per phase, idle ${IDLE_S} s\n`,
  );
  const results = await scenario(db, usingPostgres() ? 2 : 1);
  const one = results[0]!;
  const p = (xs: number[], q: number) => percentile(xs, q);
  console.log(
    `\nRemote workspace with many agents (${db}), ${SESSIONS} sessions x ${MESSAGES} messages at once, CLI answers after ${CLI_DELAY_MS} ms; ${machine()}`,
  );
  console.log(
    'agents | API RSS MB (peak) | idle CPU % of a core | idle req/s (CPU ms each) | chat CPU % | chat->agent p50 / p99 ms | p99 vs 1 agent | stdout->SSE p50 ms | no reply in 60 s | loadavg',
  );
  for (const r of results) {
    console.log(
      [
        r.agents,
        `${f1(sum(r.idle.rssMb))}${each(r.idle.rssMb)} (${f1(sum(r.chat.peakMb))})`,
        `${f1(sum(r.idle.cpuPct))}${each(r.idle.cpuPct)}`,
        `${f1(r.idleRequests / IDLE_S)} (${((sum(r.idle.cpuPct) * 10 * IDLE_S) / Math.max(1, r.idleRequests)).toFixed(2)})`,
        `${f1(sum(r.chat.cpuPct))}${each(r.chat.cpuPct)}`,
        `${f1(p(r.chatToAgent, 0.5))} / ${f1(p(r.chatToAgent, 0.99))}`,
        `${(p(r.chatToAgent, 0.99) / p(one.chatToAgent, 0.99)).toFixed(2)}x`,
        f1(p(r.stdoutToSse, 0.5)),
        r.late,
        r.loadavg,
      ].join(' | '),
    );
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
