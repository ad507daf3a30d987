// Remote workspace latency benchmark (issue 4, "Measure"). Real API (+ worker), real agent program,
// a stamping CLI (stamp-cli.mjs), a real SSE reader. For each of N chat messages, sent one at a time:
//   chat -> agent:   POST /chat sent  ->  the CLI reads the message from its stdin (the command reached
//                    the agent and was handed to the CLI; an upper bound of "reached the agent")
//   stdout -> SSE:   the CLI prints its answer line  ->  the SSE reader receives that line
// Scenarios: single node (SQLite, or PostgreSQL when DATABASE_URL is set) and, with DATABASE_URL, two
// API instances on one PostgreSQL (agent polls instance A; chat and SSE on instance B).
// Beside each message, interleaved, one sample of the raw baseline (baseline.ts: an HTTP long poll
// woken by an in-process event, and a line POSTed to an SSE stream; no database, no CLI), so the
// figures come with their ratio to the smallest thing the same machine does at the same moment.
//
//   npx tsx bench/remote/run.ts [--messages 1000]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/remote/run.ts
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { EventSource } from 'eventsource';
import { createTestDatabase, usingPostgres } from '../../test/support/database.ts';
import { ADMIN, startTestApp, type TestApp } from '../../test/support/harness.ts';
import { api, login } from '../../test/support/session.ts';
import { type OnlineMachine, onlineMachine } from '../support/remote-machine.ts';
import { machine } from '../support/stats.ts';
import { startBenchTemporal } from '../support/temporal.ts';
import { type Baseline, type BaselineSample, startBaseline } from './baseline.ts';
import { readStampedLines } from './stamped-lines.ts';

const STAMP_CLI = path.join(import.meta.dirname, 'stamp-cli.mjs');
const argv = process.argv.slice(2);
const MESSAGES = Number(argv[argv.indexOf('--messages') + 1]) || 1000;
const WARMUP = 20;
/**
 * --cli-delay <ms>: the CLI waits this long between reading a message and printing its answer (a real
 * CLI takes seconds). 0 (default) answers at once, while the chat request is still storing its rows.
 */
const CLI_DELAY_MS = argv.includes('--cli-delay') ? Number(argv[argv.indexOf('--cli-delay') + 1]) || 0 : 0;
const now = () => performance.timeOrigin + performance.now();

interface Sample {
  chatToAgent: number;
  stdoutToSse: number;
  roundTrip: number;
  /** POST /chat sent -> its 200 (the command, the prompt's rows and the audit record are stored). */
  chatAck: number;
}

interface Result {
  name: string;
  samples: Sample[];
  baseline: BaselineSample[];
  loadavg: string;
}

function stats(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const pick = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  return {
    p50: pick(0.5),
    p99: pick(0.99),
    max: s[s.length - 1]!,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
  };
}

async function scenario(name: string, instances: 1 | 2, baseline: Baseline): Promise<Result> {
  const testDb = await createTestDatabase();
  const env = { TEMPORAL_TASK_QUEUE: `bench-${randomBytes(4).toString('hex')}` };
  const a: TestApp = await startTestApp({ worker: true, testDb, env });
  const b: TestApp = instances === 2 ? await startTestApp({ worker: true, testDb, env, migrate: false }) : a;
  const admin = await login(b.url, ADMIN.username, ADMIN.password);
  let es: EventSource | undefined;
  let remote: OnlineMachine | undefined;
  try {
    // The agent polls instance A; chat and SSE go through instance B.
    remote = await onlineMachine({
      url: b.url,
      auth: admin.headers,
      agentUrl: a.url,
      extra: {
        cli_path: STAMP_CLI,
        cli_env: { STAMP_DELAY_MS: String(CLI_DELAY_MS) },
        log_level: 'WARNING',
        heartbeat_interval: 5,
      },
    });
    const sessionId = await remote.createSession();

    const waiters = new Map<
      string,
      (line: { received_at: number; printed_at: number; sseAt: number }) => void
    >();
    es = readStampedLines(b.url, sessionId, admin.headers, (line) => waiters.get(line.bench)?.(line));

    const samples: Sample[] = [];
    const base: BaselineSample[] = [];
    for (let i = 0; i < WARMUP + MESSAGES; i++) {
      const bs = await baseline.sample();
      if (i >= WARMUP) base.push(bs);
      const content = `m${i}`;
      const reply = new Promise<{ received_at: number; printed_at: number; sseAt: number }>(
        (resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no reply to ${content} within 30 s`)), 30000);
          waiters.set(content, (l) => {
            clearTimeout(timer);
            resolve(l);
          });
        },
      );
      const sentAt = now();
      const r = await api(b.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
        auth: admin,
        body: { content },
      });
      const ackedAt = now();
      if (r.status !== 200) throw new Error(`chat: ${r.status} ${JSON.stringify(r.body)}`);
      const line = await reply;
      waiters.delete(content);
      if (i >= WARMUP)
        samples.push({
          chatToAgent: line.received_at - sentAt,
          stdoutToSse: line.sseAt - line.printed_at,
          roundTrip: line.sseAt - sentAt,
          chatAck: ackedAt - sentAt,
        });
      if ((i + 1) % 200 === 0) process.stderr.write(`  ${name}: ${i + 1 - WARMUP}/${MESSAGES}\n`);
    }
    await api(b.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, { auth: admin });
    return { name, samples, baseline: base, loadavg: os.loadavg()[0]!.toFixed(1) };
  } finally {
    es?.close();
    await remote?.agent.stop();
    if (b !== a) await b.close();
    await a.close();
    await testDb.drop();
  }
}

const fmt = (n: number) => n.toFixed(1).padStart(7);
const ratio = (n: number) => `${n.toFixed(1)}x`.padStart(8);

async function main() {
  const dev = await startBenchTemporal();
  process.env.TEST_TEMPORAL_ADDRESS = dev.address;
  const baseline = await startBaseline();
  const results: Result[] = [];
  try {
    const db = usingPostgres() ? 'PostgreSQL' : 'SQLite';
    process.stderr.write(
      `remote bench: ${MESSAGES} messages per scenario (+${WARMUP} warm-up), ${os.cpus().length} CPUs, Node ${process.version}\n`,
    );
    results.push(await scenario(`single node, ${db}`, 1, baseline));
    if (usingPostgres())
      results.push(await scenario('two API instances, PostgreSQL (agent on A, browser on B)', 2, baseline));
    else process.stderr.write('  (set DATABASE_URL to a PostgreSQL server for the two-instance scenario)\n');
  } finally {
    await baseline.close();
    await dev.stop();
  }
  console.log(
    `\nRemote workspace latency, ${MESSAGES} messages, one at a time, CLI answers after ${CLI_DELAY_MS} ms (ms); ${machine()}`,
  );
  console.log(
    `${'scenario'.padEnd(58)} ${'metric'.padEnd(16)}     p50     p99    mean     max  p50/base  p99/base`,
  );
  for (const r of results) {
    const wake = stats(r.baseline.map((x) => x.wake));
    const line = stats(r.baseline.map((x) => x.lineToSse));
    const row = (metric: string, s: ReturnType<typeof stats>, base?: ReturnType<typeof stats>) =>
      console.log(
        `${r.name.padEnd(58)} ${metric.padEnd(16)} ${fmt(s.p50)} ${fmt(s.p99)} ${fmt(s.mean)} ${fmt(s.max)}` +
          (base ? `  ${ratio(s.p50 / base.p50)}  ${ratio(s.p99 / base.p99)}` : ''),
      );
    row('base: wake-up', wake);
    row('base: line->SSE', line);
    row('chat -> agent', stats(r.samples.map((x) => x.chatToAgent)), wake);
    row('stdout -> SSE', stats(r.samples.map((x) => x.stdoutToSse)), line);
    row('round trip', stats(r.samples.map((x) => x.roundTrip)));
    row('chat POST -> 200', stats(r.samples.map((x) => x.chatAck)));
    console.log(`${r.name.padEnd(58)} (load average at the end: ${r.loadavg})`);
  }
  process.exit(0);
}

// --agents N: the many-agents mode (agents.ts: API processes, idle agents, memory and CPU).
if (argv.includes('--agents')) await import('./agents.ts');
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
