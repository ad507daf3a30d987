// The raw wake-up baseline of bench/remote (issue 16 item 6): the smallest version of the same path,
// with no database, no authentication, no queue and no CLI. An HTTP server in the bench process, an
// EventEmitter, an "agent" process (baseline-agent.mjs) holding a long poll, and an SSE reader in the
// bench process:
//   POST /cmd {id}   -> emitter -> the held GET /poll answers {id}         (vs chat -> agent)
//   agent POST /line -> emitter -> the open GET /stream writes `data: ...`  (vs stdout -> SSE)
// Sampled interleaved with the real messages, so both see the same machine load; the bench prints
// the real figures as ratios to these.
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { EventSource } from 'eventsource';

const AGENT = path.join(import.meta.dirname, 'baseline-agent.mjs');
const now = () => performance.timeOrigin + performance.now();

export interface BaselineSample {
  /** POST /cmd sent -> the agent process has the message. */
  wake: number;
  /** The agent stamped printed_at -> the SSE reader has the line. */
  lineToSse: number;
}

export interface Baseline {
  sample(): Promise<BaselineSample>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => resolve(text ? JSON.parse(text) : {}));
  });
}

export async function startBaseline(): Promise<Baseline> {
  const bus = new EventEmitter();
  const queued: string[] = [];
  let heldPoll: ServerResponse | undefined;
  const server = http.createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === '/poll') {
      const id = queued.shift();
      if (id !== undefined) return void res.end(JSON.stringify({ id }));
      heldPoll = res;
      res.on('close', () => {
        if (heldPoll === res) heldPoll = undefined;
      });
      return;
    }
    if (req.method === 'POST' && req.url === '/cmd') {
      const { id } = await readBody(req);
      bus.emit('cmd', id);
      return void res.end('{}');
    }
    if (req.method === 'POST' && req.url === '/line') {
      const line = await readBody(req);
      bus.emit('line', line);
      return void res.end('{}');
    }
    if (req.method === 'GET' && req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('retry: 2000\n\n');
      const onLine = (line: unknown) => res.write(`event: output\ndata: ${JSON.stringify(line)}\n\n`);
      bus.on('line', onLine);
      res.on('close', () => bus.off('line', onLine));
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  bus.on('cmd', (id: string) => {
    const poll = heldPoll;
    heldPoll = undefined;
    if (poll) poll.end(JSON.stringify({ id }));
    else queued.push(id);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const child: ChildProcess = spawn(process.execPath, [AGENT, url], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', () => resolve());
    child.once('exit', (code) => reject(new Error(`baseline agent exited (${code})`)));
  });

  const waiters = new Map<
    string,
    (line: { received_at: number; printed_at: number; sseAt: number }) => void
  >();
  const es = new EventSource(`${url}/stream`);
  es.addEventListener('output', (e) => {
    const sseAt = now();
    const line = JSON.parse(e.data);
    waiters.get(line.id)?.({ ...line, sseAt });
  });
  await new Promise<void>((resolve) => es.addEventListener('open', () => resolve()));
  let n = 0;

  return {
    async sample() {
      const id = `b${n++}`;
      const reply = new Promise<{ received_at: number; printed_at: number; sseAt: number }>(
        (resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`baseline: no line ${id} within 10 s`)), 10_000);
          waiters.set(id, (l) => {
            clearTimeout(timer);
            resolve(l);
          });
        },
      );
      const sentAt = now();
      // fetch, as the real bench's chat POST (test/support/session.ts api()).
      const res = await fetch(`${url}/cmd`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id }),
      });
      await res.text();
      const line = await reply;
      waiters.delete(id);
      return { wake: line.received_at - sentAt, lineToSse: line.sseAt - line.printed_at };
    },
    async close() {
      es.close();
      bus.emit('cmd', 'stop');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
