// Runs a program under strace and lists every network connection it (or any child) tried to open,
// so a test can prove a CLI talks to nothing but the proxy: any other address, a DNS server included,
// shows up here whether or not the attempt succeeded. Unix sockets are left out.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ConnectAttempt {
  family: 'inet' | 'inet6';
  address: string;
  port: number;
}

export interface TracedRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  connects: ConnectAttempt[];
  timedOut: boolean;
}

/** Parses strace's `connect(...)` lines (our own trace file, not request input). */
export function parseConnects(trace: string): ConnectAttempt[] {
  const out: ConnectAttempt[] = [];
  for (const line of trace.split('\n')) {
    // sendto/sendmsg/sendmmsg only when traced (opts.udpSends): datagrams with their own destination.
    if (!/(?:connect|sendto|sendmsg|sendmmsg)\(/.test(line)) continue;
    const v4 = /sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/.exec(line);
    if (v4) {
      out.push({ family: 'inet', address: v4[2]!, port: Number(v4[1]) });
      continue;
    }
    const v6 = /sa_family=AF_INET6, sin6_port=htons\((\d+)\),.*?inet_pton\(AF_INET6, "([^"]+)"/.exec(line);
    if (v6) out.push({ family: 'inet6', address: v6[2]!, port: Number(v6[1]) });
  }
  return out;
}

/** Runs `command args` with `env` and `cwd`, writing `stdin`, killed after `timeoutMs`. */
export async function traceConnects(
  command: string,
  args: string[],
  opts: {
    env: NodeJS.ProcessEnv;
    cwd: string;
    stdin?: string;
    timeoutMs: number;
    /**
     * Also list datagrams sent to an address without connect() (sendto/sendmsg/sendmmsg): some
     * resolvers send DNS queries that way, which connect() tracing alone would miss.
     */
    udpSends?: boolean;
  },
): Promise<TracedRun> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'svc-trace-')), 'connect.trace');
  const calls = opts.udpSends ? 'trace=connect,sendto,sendmsg,sendmmsg' : 'trace=connect';
  const child = spawn('strace', ['-f', '-qq', '-e', calls, '-o', file, command, ...args], {
    env: opts.env,
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  child.stdin.end(opts.stdin ?? '');
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  }, opts.timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  clearTimeout(timer);
  let trace = '';
  try {
    trace = readFileSync(file, 'utf8');
  } catch {}
  return { code, signal, stdout, stderr, connects: parseConnects(trace), timedOut };
}

/** Connections to anything but `allowed` (host:port strings such as `127.0.0.1:4321`). */
export const foreignConnects = (run: TracedRun, allowed: string[]) =>
  run.connects.filter((c) => !allowed.includes(`${c.address}:${c.port}`));
