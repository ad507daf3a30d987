// Closed-loop load generator for bench/proxy, run as a child process so it has its own event loop:
//
//   node --import tsx bench/proxy/load.ts '<json LoadConfig>'   -> one JSON LoadResult line on stdout
//
// `concurrency` workers each send one request at a time on keep-alive connections, for `requests`
// requests in total or for `durationMs`. Latency is request start to the end of the body; time to
// first byte is request start to the first body chunk (what a streaming client waits for).
import http from 'node:http';

export interface LoadConfig {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  concurrency: number;
  /** Stop after this many requests... */
  requests?: number;
  /** ...or after this long. */
  durationMs?: number;
  /** Requests sent first and not measured. */
  warmup?: number;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

export interface LoadResult {
  count: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  /** Milliseconds. */
  latency: Percentiles;
  ttfb: Percentiles;
}

function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, mean: Number.NaN };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    mean: values.reduce((a, b) => a + b, 0) / values.length,
  };
}

export async function runLoad(config: LoadConfig): Promise<LoadResult> {
  const url = new URL(config.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.concurrency });
  const body = config.body === undefined ? undefined : Buffer.from(config.body);
  const headers: Record<string, string | number> = { ...config.headers };
  if (body) headers['content-length'] = body.length;
  const options: http.RequestOptions = {
    hostname: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    method: config.method ?? (body ? 'POST' : 'GET'),
    headers,
    agent,
  };

  const one = () =>
    new Promise<{ status: number; total: number; first: number }>((resolve, reject) => {
      const start = process.hrtime.bigint();
      let first = 0;
      const req = http.request(options, (res) => {
        res.on('data', () => {
          if (first === 0) first = Number(process.hrtime.bigint() - start) / 1e6;
        });
        res.on('end', () => {
          const total = Number(process.hrtime.bigint() - start) / 1e6;
          resolve({ status: res.statusCode ?? 0, total, first: first || total });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });

  for (let i = 0; i < (config.warmup ?? 0); i++) await one();

  const latencies: number[] = [];
  const firsts: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let sent = 0;
  const started = process.hrtime.bigint();
  const deadline = config.durationMs === undefined ? undefined : Date.now() + config.durationMs;
  const more = () =>
    (config.requests === undefined || sent < config.requests) &&
    (deadline === undefined || Date.now() < deadline);

  await Promise.all(
    Array.from({ length: config.concurrency }, async () => {
      while (more()) {
        sent++;
        try {
          const r = await one();
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          if (r.status !== 200) errors++;
          latencies.push(r.total);
          firsts.push(r.first);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return {
    count: latencies.length,
    errors,
    statuses,
    seconds,
    rps: latencies.length / seconds,
    latency: percentiles(latencies),
    ttfb: percentiles(firsts),
  };
}

if (process.argv[2]) {
  const result = await runLoad(JSON.parse(process.argv[2]) as LoadConfig);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
