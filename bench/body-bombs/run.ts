// bench/body-bombs: what gzip bombs cost the API (issue 25 item 4). Starts the real API in a child
// process (bench/body-bombs/serve.ts), measures its idle RSS, then per phase sends N concurrent
// ~46 KB gzip bombs (a 50 MB JSON string of zeros, gzip level 9) and, while they run, probes /livez
// every 10 ms. Prints per phase the answers' statuses, /livez latency (median, p99, max) during the
// bombs, the peak RSS during and the RSS 1 s after, beside the idle baseline. Phases:
//   login          POST /api/auth/login, unauthenticated (refused with 415, never inflated)
//   upload-no-key  POST /api/upload/batch without X-Upload-Auth (401 before the body is read)
//   upload-key     POST /api/upload/batch WITH the key (inflated, stopped by the ratio cap: 413)
// The aim: /livez within 50 ms and RSS within 100 MB of idle.
//
//   npm run bench -- body-bombs [--concurrency 20] [--mb 50]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npm run bench -- body-bombs
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { machine, median, percentile } from '../support/stats.ts';

const { values } = parseArgs({
  options: { concurrency: { type: 'string', default: '20' }, mb: { type: 'string', default: '50' } },
});
const concurrency = Number(values.concurrency);
const decodedBytes = Number(values.mb) * 1024 * 1024;
const UPLOAD_KEY = 'bench-upload-key';

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function startServer(): Promise<{ child: ChildProcess; url: string; pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'serve.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        const { url, pid } = JSON.parse(line) as { url: string; pid: number };
        resolve({ child, url, pid });
      }
    });
    child.once('exit', (code) => reject(new Error(`serve.ts exited with ${code}`)));
  });
}

/** One POST of `body`; resolves with the status (or the error code when the server cut it off). */
function post(url: string, body: Buffer, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...headers },
      agent: false,
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
    });
    req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? 'error'));
    req.end(body);
  });
}

async function livezOnce(url: string): Promise<number> {
  const started = performance.now();
  await fetch(`${url}/livez`).then((r) => r.arrayBuffer());
  return performance.now() - started;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function phase(
  name: string,
  server: { url: string; pid: number },
  target: string,
  headers: Record<string, string>,
  bomb: Buffer,
  idle: number,
) {
  const latencies: number[] = [];
  let peak = rssMb(server.pid);
  let done = false;
  const probe = (async () => {
    while (!done) {
      latencies.push(await livezOnce(server.url));
      peak = Math.max(peak, rssMb(server.pid));
      await sleep(10);
    }
  })();
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: concurrency }, () => post(`${server.url}${target}`, bomb, headers)),
  );
  const elapsed = performance.now() - started;
  // A few more probes after the last answer: an event loop still busy inflating shows here.
  await sleep(200);
  done = true;
  await probe;
  await sleep(1000);
  const after = rssMb(server.pid);
  const counts: Record<string, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  const f = (n: number) => n.toFixed(1);
  console.log(
    `${name.padEnd(14)} answers ${JSON.stringify(counts)} in ${f(elapsed)} ms | /livez during (${latencies.length} probes) ` +
      `median ${f(median(latencies))} ms, p99 ${f(percentile(latencies, 0.99))} ms, max ${f(Math.max(...latencies))} ms | ` +
      `RSS idle ${f(idle)} MB, peak ${f(peak)} MB (+${f(peak - idle)}), after ${f(after)} MB (+${f(after - idle)})`,
  );
}

async function main() {
  const json = Buffer.concat([
    Buffer.from('{"username":"'),
    Buffer.alloc(decodedBytes, 0x30),
    Buffer.from('"}'),
  ]);
  const bomb = gzipSync(json, { level: 9 });
  console.log(
    `body-bombs: ${concurrency} concurrent bombs of ${(bomb.length / 1024).toFixed(1)} KB gzip (${values.mb} MB decoded) ` +
      `per phase; database ${process.env.DATABASE_URL ? 'postgres' : 'sqlite'}; ${machine()}`,
  );
  const server = await startServer();
  try {
    for (let i = 0; i < 20; i++) await livezOnce(server.url); // warm up the route and the connection pool
    await sleep(500);
    const idle = rssMb(server.pid);
    await phase('login', server, '/api/auth/login', {}, bomb, idle);
    await phase('upload-no-key', server, '/api/upload/batch', {}, bomb, idle);
    await phase('upload-key', server, '/api/upload/batch', { 'x-upload-auth': UPLOAD_KEY }, bomb, idle);
  } finally {
    server.child.kill('SIGTERM');
  }
}

await main();
