// bench/auth: requests per second of an authenticated `GET /api/auth/check` against `GET /livez`, in
// one run, at the same concurrency, with autocannon. The API runs in this process on a fresh database
// (SQLite in a temp dir, or a new PostgreSQL database when DATABASE_URL is set); these routes do not
// touch Temporal, so no Temporal server is started (the client is lazy and never connects).
// A second stack with the session cache off (SVC_AUTH_SESSION_CACHE_SIZE=0, i.e. one query per
// request, as before the cache) runs interleaved in the same rounds: the "before" figure of the same run.
//
//   npx tsx bench/auth/run.ts [--connections 32] [--duration 5] [--rounds 3] [--pipelining 1]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/auth/run.ts
//
// autocannon runs as a child process (its own event loop), but on the same machine: it shares the
// cores with the API, so figures are relative, not absolute; the ratio is the number to read.
import { parseArgs } from 'node:util';
import type autocannon from 'autocannon';
import { existingAuthSessionCache } from '../../db/auth-session-cache.ts';
import { autocannonRun } from '../support/child.ts';
import { BENCH_ADMIN, startStack } from '../support/stack.ts';
import { machine, percentile } from '../support/stats.ts';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '32' },
    duration: { type: 'string', default: '5' },
    pipelining: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
  },
});
const connections = Number(values.connections);
const duration = Number(values.duration);
const pipelining = Number(values.pipelining);
const rounds = Number(values.rounds);

async function main() {
  const stack = await startStack({ admin: BENCH_ADMIN });
  const uncached = await startStack({ admin: BENCH_ADMIN, env: { SVC_AUTH_SESSION_CACHE_SIZE: '0' } }).catch(
    async (err) => {
      await stack.close();
      throw err;
    },
  );
  const { database } = stack;
  try {
    const headers = { cookie: stack.admin!.cookie };
    const uncachedHeaders = { cookie: uncached.admin!.cookie };
    for (const [s, h] of [
      [stack, headers],
      [uncached, uncachedHeaders],
    ] as const) {
      const check = (await (await fetch(`${s.url}/api/auth/check`, { headers: h })).json()) as {
        authenticated: boolean;
      };
      if (!check.authenticated) throw new Error('the session does not authenticate');
    }
    // PostgreSQL: the cache is in use once its LISTEN connection is up.
    await existingAuthSessionCache(database)?.ready();

    const runOn = (url: string, path: string, seconds: number, h: Record<string, string> = {}) =>
      autocannonRun({ url: `${url}${path}`, connections, pipelining, seconds, headers: h });
    const run = (path: string, seconds: number, h: Record<string, string> = {}) =>
      runOn(stack.url, path, seconds, h);
    const target = (r: autocannon.Result) => {
      if (r.non2xx || r.errors) throw new Error(`${r.non2xx} non-2xx and ${r.errors} errors`);
      return r;
    };

    // Warm both paths (JIT, connection pool, caches). Then alternate short runs of the two routes,
    // swapping the order each round, so load from elsewhere on the machine hits both alike.
    await run('/livez', Number(values.warmup));
    await run('/api/auth/check', Number(values.warmup), headers);
    await runOn(uncached.url, '/api/auth/check', Number(values.warmup), uncachedHeaders);
    const totals = {
      livez: { requests: 0, seconds: 0, cpuUs: 0, p50: [] as number[], p99: [] as number[] },
      check: { requests: 0, seconds: 0, cpuUs: 0, p50: [] as number[], p99: [] as number[] },
      uncached: { requests: 0, seconds: 0, cpuUs: 0, p50: [] as number[], p99: [] as number[] },
    };
    const ratios: number[] = [];
    const uncachedRatios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const order: ('livez' | 'check' | 'uncached')[] =
        round % 2 ? ['uncached', 'check', 'livez'] : ['livez', 'check', 'uncached'];
      const rps: Record<string, number> = {};
      for (const which of order) {
        const cpu = process.cpuUsage();
        const r = target(
          which === 'livez'
            ? await run('/livez', duration)
            : which === 'check'
              ? await run('/api/auth/check', duration, headers)
              : await runOn(uncached.url, '/api/auth/check', duration, uncachedHeaders),
        );
        const used = process.cpuUsage(cpu);
        const t = totals[which];
        t.requests += r.requests.total;
        t.seconds += r.duration;
        t.cpuUs += used.user + used.system;
        t.p50.push(r.latency.p50);
        t.p99.push(r.latency.p99);
        rps[which] = r.requests.total / r.duration;
      }
      ratios.push(rps.check! / rps.livez!);
      uncachedRatios.push(rps.uncached! / rps.livez!);
    }
    const median = (xs: number[]) => percentile(xs, 0.5);
    const line = (name: string, t: (typeof totals)['livez']) =>
      `${name.padEnd(28)} ${(t.requests / t.seconds).toFixed(0).padStart(7)} req/s   p50 ${String(median(t.p50)).padStart(3)} ms   p99 ${String(median(t.p99)).padStart(3)} ms   server CPU ${(t.cpuUs / t.requests).toFixed(0).padStart(4)} us/request`;
    console.log(
      `bench/auth  database=${database.dialect}  connections=${connections}  pipelining=${pipelining}  rounds=${rounds} x ${duration}s per route  ${machine()}`,
    );
    console.log(line('GET /livez', totals.livez));
    console.log(line('GET /api/auth/check (auth)', totals.check));
    console.log(line('  same, session cache off', totals.uncached));
    const rate = (t: (typeof totals)['livez']) => t.requests / t.seconds;
    const cpuPer = (t: (typeof totals)['livez']) => t.cpuUs / t.requests;
    const rpsRatio = rate(totals.check) / rate(totals.livez);
    const cpuRatio = cpuPer(totals.livez) / cpuPer(totals.check);
    console.log(
      `ratio auth/check : livez  req/s ${rpsRatio.toFixed(2)}  (per-round median ${median(ratios).toFixed(2)}; from server CPU per request ${cpuRatio.toFixed(2)})`,
    );
    console.log(
      `  cache off : livez       req/s ${(rate(totals.uncached) / rate(totals.livez)).toFixed(2)}  (per-round median ${median(uncachedRatios).toFixed(2)}; from server CPU per request ${(cpuPer(totals.livez) / cpuPer(totals.uncached)).toFixed(2)})`,
    );
    const stats = existingAuthSessionCache(database)?.stats();
    if (stats) console.log(`session cache  size ${stats.size}  hits ${stats.hits}  misses ${stats.misses}`);
  } finally {
    await uncached.close();
    await stack.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
