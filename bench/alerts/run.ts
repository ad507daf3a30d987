// bench/alerts: latency from "alert raised" (raiseAlert called) to "delivered" at each of N SSE clients
// and N socket.io clients (default 500 + 500) connected to one API instance, p50/p99 per transport
// (issue 11, "Measure": aim p99 < 100 ms on one instance). The API runs in this process on a fresh
// database (SQLite in a temp dir, or a new PostgreSQL database when DATABASE_URL is set); no Temporal
// server is needed (the client is lazy and never connects).
//
//   npx tsx bench/alerts/run.ts [--sse 500] [--sockets 500] [--alerts 30]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/alerts/run.ts
//
// The clients run in this process too (one clock for both ends, no cross-process skew), so they share
// the event loop and the cores with the server: the figures include the clients' own parsing.
import { parseArgs } from 'node:util';
import { io, type Socket } from 'socket.io-client';
import { Agent } from 'undici';
import { alertBusFor } from '../../services/alerts/bus.ts';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { BENCH_ADMIN, startStack } from '../support/stack.ts';
import { machine, percentile } from '../support/stats.ts';

const { values } = parseArgs({
  options: {
    sse: { type: 'string', default: '500' },
    sockets: { type: 'string', default: '500' },
    alerts: { type: 'string', default: '30' },
    /** Print the statements sent while alerts were measured, by text. */
    statements: { type: 'boolean', default: false },
  },
});
const SSE = Number(values.sse);
const SOCKETS = Number(values.sockets);
const ALERTS = Number(values.alerts);

/** alert_id -> the time it was raised (performance.now()), and the latencies seen per transport. */
const raisedAt = new Map<string, number>();
const latencies = { sse: [] as number[], socket: [] as number[] };
/** Per alert, where the time went: raiseAlert returned (stored, and NOTIFYd on PostgreSQL), the bus
 * emitted it to this process's subscribers, the last client had it. */
const stages = { stored: [] as number[], emitted: [] as number[], last: [] as number[] };
let emittedAt = 0;
let received = 0;
let onReceived: (() => void) | undefined;
const record = (kind: 'sse' | 'socket', alertId: string) => {
  const t0 = raisedAt.get(alertId);
  if (t0 === undefined) return;
  latencies[kind].push(performance.now() - t0);
  received++;
  onReceived?.();
};

async function sseClient(url: string, cookie: string, dispatcher: Agent) {
  const res = await fetch(`${url}/api/alerts/stream`, { headers: { cookie }, dispatcher } as RequestInit);
  if (res.status !== 200) throw new Error(`stream: ${res.status}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let end = buf.indexOf('\n\n');
      while (end >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (data) record('sse', (JSON.parse(data.slice(6)) as { alert_id: string }).alert_id);
        end = buf.indexOf('\n\n');
      }
    }
  })();
  return reader;
}

function socketClient(url: string, token: string): Promise<Socket> {
  const s = io(`${url}/alerts`, { transports: ['websocket'], reconnection: false, auth: { token } });
  s.on('alert', (a: { alert_id: string }) => record('socket', a.alert_id));
  return new Promise((resolve, reject) => {
    s.once('ready', () => resolve(s));
    s.once('connect_error', reject);
  });
}

const pct = (xs: number[], p: number) => percentile(xs, p / 100);

async function main() {
  const stack = await startStack({ admin: BENCH_ADMIN });
  const { database, deps } = stack;
  const dispatcher = new Agent({ connections: null, pipelining: 0 });
  const readers: ReadableStreamDefaultReader[] = [];
  const sockets: Socket[] = [];
  try {
    const { cookie, token, user } = stack.admin!;
    for (let i = 0; i < SSE; i += 50)
      readers.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(50, SSE - i) }, () => sseClient(stack.url, cookie, dispatcher)),
        )),
      );
    for (let i = 0; i < SOCKETS; i += 50)
      sockets.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(50, SOCKETS - i) }, () => socketClient(stack.url, token)),
        )),
      );
    const clients = SSE + SOCKETS;
    // Counts the statements this process sends while alerts are raised and delivered.
    let statements = 0;
    const texts = new Map<string, number>();
    const query = database.sql.query.bind(database.sql);
    database.sql.query = ((...args: Parameters<typeof query>) => {
      statements++;
      if (values.statements) {
        const t = args[0].replace(/\s+/g, ' ').slice(0, 90);
        texts.set(t, (texts.get(t) ?? 0) + 1);
      }
      return query(...args);
    }) as typeof query;
    let measuredStatements = 0;
    // Registered after the SSE and socket.io subscribers: runs once the bus hands the alert over.
    alertBusFor(deps).subscribe(() => {
      emittedAt = performance.now();
    });
    // Warm-up alert, not counted.
    for (let n = -1; n < ALERTS; n++) {
      const alertId = `bench-${n}-${Date.now()}`;
      received = 0;
      const all = new Promise<void>((resolve) => {
        onReceived = () => {
          if (received >= clients) resolve();
        };
      });
      const before = statements;
      const t0 = performance.now();
      raisedAt.set(alertId, t0);
      await raiseAlert(database, {
        alertId,
        alertType: 'bench',
        severity: 'critical',
        title: 'bench',
        message: null,
        userId: user.id,
        tenantId: null,
      });
      const stored = performance.now();
      await all;
      const last = performance.now();
      if (n < 0) {
        latencies.sse.length = 0;
        latencies.socket.length = 0;
      } else {
        stages.stored.push(stored - t0);
        stages.emitted.push(emittedAt - t0);
        stages.last.push(last - t0);
        // Includes statements a read triggered by this alert's notification sends after delivery.
        await new Promise((r) => setTimeout(r, 5));
        measuredStatements += statements - before;
      }
    }
    console.log(
      `bench/alerts  database=${database.dialect}  sse=${SSE}  socket.io=${SOCKETS}  alerts=${ALERTS}  ${machine()}`,
    );
    for (const kind of ['sse', 'socket'] as const) {
      const xs = latencies[kind];
      console.log(
        `${kind === 'sse' ? 'SSE      ' : 'socket.io'}  deliveries ${String(xs.length).padStart(6)}  p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms  p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms  max ${Math.max(...xs).toFixed(1)} ms`,
      );
    }
    const stage = (name: string, xs: number[]) =>
      `${name} p50 ${pct(xs, 50).toFixed(1)} / max ${Math.max(...xs).toFixed(1)} ms`;
    console.log(
      `statements per alert (insert, NOTIFY and reads): ${(measuredStatements / ALERTS).toFixed(2)}`,
    );
    for (const [t, count] of [...texts].sort((a, b) => b[1] - a[1])) console.log(`  ${count}x ${t}`);
    console.log(
      `per alert: ${stage('stored', stages.stored)};  ${stage('bus handed to every subscriber', stages.emitted)};  ${stage('last client', stages.last)}`,
    );
  } finally {
    for (const s of sockets) s.close();
    for (const r of readers) await r.cancel().catch(() => undefined);
    await stack.close();
    await dispatcher.close().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
