// bench/proxy: what the model proxy costs over calling the provider directly, in one run, against the
// baselines of shared/PERF.md.
//
//   npx tsx bench/proxy/run.ts [--rounds 3] [--requests 2000] [--duration 5] [--profile]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npx tsx bench/proxy/run.ts
//
// Paths, measured in interleaved rounds (the order rotates every round) and reported as the median
// over rounds:
//   direct          the client calls the mock provider itself
//   pass-through    the thinnest correct Node proxy (passthrough.ts, the PERF.md baseline)
//   forwarder       forwardToProvider alone in a bare http server: header filtering, usage reading,
//                   no Express, no token, no database
//   proxy           the real thing: the full API (Express, request ids, metrics), proxy token check,
//                   one context query, quota reservation and settlement, key decryption, usage
//                   reading and recording, on SQLite (default) or PostgreSQL (DATABASE_URL)
//   gateway         the same proxy called with a personal gateway key of the same user (issue 29: its
//                   hash looked up instead of a signature checked; no key limits), in the same run
// Per path: sequential (concurrency 1) latency p50/p99 of a small JSON chat completion, time to first
// byte of a small SSE stream at concurrency 1 and 64, requests/s at 1 and 64, latency at 64.
//
// Processes: the mock provider runs in its own process; the pass-through, the forwarder and the API
// run in this process (one at a time is loaded); the load generators (load.ts for latency and TTFB,
// autocannon for requests/s at 64) are child processes. Everything shares the machine's cores, so
// absolute figures move from run to run; the ratios are what to read.
//
// --filter-rules N: the bench tenant gets N keyword block rules (the content filter scans every call).
//
// --profile: after the rounds, profiles this process (the API) under the concurrency-64 load with the
// V8 inspector, writes the .cpuprofile to the data directory and prints where the time goes.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type autocannon from 'autocannon';
import { forwardToProvider } from '../../api/llm-proxy/forward.ts';
import { providerAuthHeaders } from '../../api/llm-proxy/provider-auth.ts';
import { gatewayKeyPrefix, hashGatewayKey, newGatewayKey } from '../../domain/gateway-keys.ts';
import type { AppDeps } from '../../services/deps.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { quotaServiceFor } from '../../services/quota.ts';
import { storedKeyCipher } from '../../services/stored-keys.ts';
import { autocannonRun, nodeChild } from '../support/child.ts';
import { startStack } from '../support/stack.ts';
import { median } from '../support/stats.ts';
import type { LoadConfig, LoadResult } from './load.ts';
import { listen as listenServer, type RunningServer, startPassthrough } from './passthrough.ts';

const { values } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' },
    requests: { type: 'string', default: '2000' },
    duration: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    profile: { type: 'boolean', default: false },
    /** Which path --profile loads (default proxy). */
    'profile-path': { type: 'string', default: 'proxy' },
    /** Keyword block rules the bench tenant gets (its content filter is on by default): 0 = no scan. */
    'filter-rules': { type: 'string', default: '0' },
    /** Comma list of paths to measure (default all); `direct` is always included. */
    paths: { type: 'string', default: 'direct,pass-through,forwarder,proxy,gateway' },
  },
});
const ROUNDS = Number(values.rounds);
const REQUESTS = Number(values.requests);
const DURATION_S = Number(values.duration);
const CONCURRENCY = Number(values.concurrency);
const FILTER_RULES = Number(values['filter-rules']);

const HERE = path.dirname(new URL(import.meta.url).pathname);
const REAL_KEY = 'sk-bench-real-key';
const BODY = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hi' }] });

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
}

interface Sample {
  seq: LoadResult;
  stream1: LoadResult;
  streamN: LoadResult;
  rpsN: number;
  latN: { p50: number; p99: number };
  /** CPU time this process (where the proxies run) spent per request at concurrency N, in us. */
  cpuPerRequest: number;
}

async function load(config: LoadConfig): Promise<LoadResult> {
  const out = await nodeChild(['--import', 'tsx', path.join(HERE, 'load.ts'), JSON.stringify(config)]);
  return JSON.parse(out) as LoadResult;
}

function cannon(t: Target, connections: number, seconds: number): Promise<autocannon.Result> {
  return autocannonRun({
    url: t.url,
    connections,
    seconds,
    method: 'POST',
    body: BODY,
    headers: { ...t.headers, 'content-type': 'application/json' },
  });
}

export async function startMockProcess(): Promise<{ url: string; stop(): void }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'mock-process.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl !== -1) resolve((JSON.parse(buf.slice(0, nl)) as { url: string }).url);
    });
    proc.once('exit', (code) => reject(new Error(`mock exited with ${code}`)));
  });
  return { url, stop: () => proc.kill('SIGTERM') };
}

/** forwardToProvider alone: what the streaming hot path costs without the app around it. */
export async function startForwarder(upstreamBase: string): Promise<RunningServer> {
  const providerAuth = providerAuthHeaders('openai', REAL_KEY);
  const server = http.createServer((req, res) => {
    forwardToProvider({ req, res, upstreamBase, path: req.url ?? '/', providerAuth, provider: 'openai' });
  });
  server.keepAliveTimeout = 65_000;
  return listenServer(server);
}

/** The full API on a fresh database, with a tenant, a user, a live session, its token and a stored key. */
export async function startApi(mockUrl: string) {
  let token = '';
  let gatewayKey = '';
  const api = await startStack({
    env: {
      LOG_LEVEL: 'info',
      SVC_ENCRYPTION_KEY: 'bench-encryption-key',
      SECRET_KEY: 'bench-secret-key',
      // The proxy's per-instance switches, taken from this process's environment when set (README).
      ...passedThrough([
        'SVC_QUOTA_LEASE_REQUESTS',
        'SVC_QUOTA_LEASE_TOKENS',
        'SVC_PROXY_CONTEXT_CACHE_SIZE',
        'SVC_PROXY_ACCOUNTING',
      ]),
    },
    // warn: the production default (info) writes nothing per successful call either; this keeps the
    // callers that autocannon drops at the end of a timed run (status 0, info) out of the output.
    logLevel: 'warn',
    prepare: async (deps) => {
      ({ token, gatewayKey } = await seed(deps, mockUrl));
    },
  });
  const { deps } = api;
  const { db, t } = api.database;
  return {
    url: api.url,
    token,
    gatewayKey,
    dialect: api.database.dialect,
    switches: {
      contextCache: deps.settings.SVC_PROXY_CONTEXT_CACHE_SIZE,
      leaseRequests: deps.settings.SVC_QUOTA_LEASE_REQUESTS,
      leaseTokens: deps.settings.SVC_QUOTA_LEASE_TOKENS,
      filterRules: FILTER_RULES,
      accounting: deps.settings.SVC_PROXY_ACCOUNTING,
    },
    async usage() {
      await quotaServiceFor(deps).flush();
      const [row] = await db.select().from(t.agentSessions);
      return { requests: row!.requestCount, tokens: row!.totalTokens };
    },
    close: api.close,
  };
}

function passedThrough(names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of names) if (process.env[n]) out[n] = process.env[n]!;
  return out;
}

/**
 * A tenant with quotas, a user with personal limits, a live session and a stored key; the session's
 * proxy token, and a gateway key of the same user.
 */
async function seed(deps: AppDeps, mockUrl: string): Promise<{ token: string; gatewayKey: string }> {
  const { settings, database } = deps;
  const { db, t } = database;
  const [tenant] = await db
    .insert(t.tenants)
    .values({ name: 'bench', slug: `bench-${randomUUID()}` })
    .returning();
  const big = 1_000_000_000_000;
  await db.insert(t.tenantQuotas).values({
    tenantId: tenant!.id,
    dailyTokenLimit: big,
    monthlyTokenLimit: big,
    dailyRequestLimit: big,
    monthlyRequestLimit: big,
  });
  // Personal limits too, so both halves of the quota check do real work.
  const [user] = await db
    .insert(t.users)
    .values({
      username: 'bench-user',
      passwordHash: 'x',
      tenantId: tenant!.id,
      dailyTokenQuota: 1_000_000,
      monthlyTokenQuota: 1_000_000,
      dailyRequestQuota: big,
      monthlyRequestQuota: big,
    })
    .returning();
  const sessionId = randomUUID();
  await db.insert(t.agentSessions).values({
    sessionId,
    tenantId: tenant!.id,
    toolName: 'cli_alpha',
    hostName: 'bench-machine',
    userId: user!.id,
    status: 'active',
    workspaceType: 'remote',
  });
  // --filter-rules: block rules that the prompt ("hi") never matches, so every call is read, scanned
  // and forwarded (the content filter's cost on the path).
  if (FILTER_RULES > 0)
    await db.insert(t.contentFilterRules).values(
      Array.from({ length: FILTER_RULES }, (_, i) => ({
        pattern: `bench-blocked-${i}`,
        type: 'keyword',
        action: 'block',
        tenantId: tenant!.id,
      })),
    );
  const sealed = storedKeyCipher(settings).seal(REAL_KEY);
  await db.insert(t.apiKeyStore).values({
    tenantId: tenant!.id,
    provider: 'openai',
    keyName: 'bench',
    encryptedKey: sealed.encryptedKey,
    keyHash: sealed.keyHash,
    baseUrl: `${mockUrl}/v1`,
    // Stored by a system administrator, as a self-hosted gateway key would be: the egress policy for
    // tenant-written keys (which refuses loopback) does not apply.
    createdBySystemAdmin: true,
  });
  const { token } = await proxyTokenService(deps).issue({
    sessionId,
    userId: user!.id,
    tenantId: tenant!.id,
    provider: 'openai',
  });
  const gatewayKey = newGatewayKey();
  await db.insert(t.gatewayKeys).values({
    tenantId: tenant!.id,
    userId: user!.id,
    name: 'bench laptop',
    provider: 'openai',
    keyHash: hashGatewayKey(gatewayKey),
    keyPrefix: gatewayKeyPrefix(gatewayKey),
  });
  return { token, gatewayKey };
}

async function measure(t: Target): Promise<Sample> {
  const json = { url: t.url, headers: { ...t.headers, 'content-type': 'application/json' }, body: BODY };
  const stream = { ...json, url: `${t.url}?stream=1` };
  const seq = await load({ ...json, concurrency: 1, requests: REQUESTS, warmup: 200 });
  const stream1 = await load({ ...stream, concurrency: 1, requests: Math.ceil(REQUESTS / 2), warmup: 50 });
  const streamN = await load({ ...stream, concurrency: CONCURRENCY, durationMs: DURATION_S * 1000 });
  const cpu = process.cpuUsage();
  const c = await cannon(t, CONCURRENCY, DURATION_S);
  const used = process.cpuUsage(cpu);
  if (c.non2xx || c.errors)
    throw new Error(`${t.name}: ${c.non2xx} non-2xx and ${c.errors} errors at c=${CONCURRENCY}`);
  for (const r of [seq, stream1, streamN])
    if (r.errors) throw new Error(`${t.name}: ${r.errors} failed requests ${JSON.stringify(r.statuses)}`);
  return {
    seq,
    stream1,
    streamN,
    rpsN: c.requests.average,
    latN: { p50: c.latency.p50, p99: c.latency.p99 },
    cpuPerRequest: (used.user + used.system) / Math.max(1, c.requests.total),
  };
}

async function profile(t: Target, outDir: string) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const c = await cannon(t, CONCURRENCY, DURATION_S);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const file = path.join(outDir, `proxy-${Date.now()}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));

  // Self time per node, from the sample counts.
  const self = new Map<number, number>();
  const dt = profile.timeDeltas ?? [];
  const samples = profile.samples ?? [];
  for (let i = 0; i < samples.length; i++) self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + (dt[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (!us) continue;
    const f = node.callFrame;
    const where = f.url ? f.url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '') : '(native)';
    const key = `${f.functionName || '(anonymous)'}  ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byArea.set(area(f.functionName, where), (byArea.get(area(f.functionName, where)) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
  const perRequest = (us: number) => `${(us / c.requests.total).toFixed(1).padStart(6)} us/req`;
  console.log(`\nCPU profile of this process under ${CONCURRENCY} concurrent ${t.name} calls: ${file}`);
  console.log('\nself time by area');
  for (const [k, us] of [...byArea].sort((a, b) => b[1] - a[1]))
    console.log(`  ${pct(us)} ${perRequest(us)}  ${k}`);
  console.log('\ntop functions (self time)');
  for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${pct(us)} ${perRequest(us)}  ${k}`);
}

function area(fn: string, where: string): string {
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(program)') return 'V8 / native (program)';
  if (where.includes('better-sqlite3') || (/^(all|run|get|prepare|exec)$/.test(fn) && where === '(native)'))
    return 'SQLite (better-sqlite3)';
  if (where.includes('node_modules/pg')) return 'PostgreSQL client (pg)';
  if (where.includes('node_modules/drizzle-orm')) return 'drizzle-orm';
  if (where.includes('node_modules/express') || where.includes('node_modules/router'))
    return 'Express / router';
  if (where.includes('node_modules/pino')) return 'logging (pino, pino-http)';
  if (where.includes('node_modules/prom-client')) return 'metrics (prom-client)';
  if (where.includes('node_modules/'))
    return `other packages (${where.split('node_modules/')[1]!.split('/')[0]})`;
  if (where.startsWith('node:')) {
    if (/_http|http/.test(where)) return 'Node http (node:_http_*)';
    if (/net|stream|buffer|timers/.test(where)) return 'Node net / streams / timers';
    return 'Node internals (other)';
  }
  if (where === '(native)') return `native (${fn || 'anonymous'})`;
  if (where.startsWith('api/llm-proxy/') || where.startsWith('domain/usage/'))
    return 'forwarder + usage tap (api/llm-proxy, domain/usage)';
  if (
    where.startsWith('api/') ||
    where.startsWith('services/') ||
    where.startsWith('db/') ||
    where.startsWith('domain/')
  )
    return 'our app code (routes, services, repositories)';
  return `other (${where})`;
}

function fmt(n: number, digits = 2) {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

async function main() {
  const mock = await startMockProcess();
  const passthrough = await startPassthrough(`${mock.url}/v1`, REAL_KEY);
  const forwarder = await startForwarder(`${mock.url}/v1`);
  const api = await startApi(mock.url);
  const wanted = new Set(['direct', ...values.paths.split(',')]);
  const all: Target[] = [
    {
      name: 'direct',
      url: `${mock.url}/v1/chat/completions`,
      headers: { authorization: `Bearer ${REAL_KEY}` },
    },
    {
      name: 'pass-through',
      url: `${passthrough.url}/chat/completions`,
      headers: { authorization: 'Bearer caller' },
    },
    {
      name: 'forwarder',
      url: `${forwarder.url}/chat/completions`,
      headers: { authorization: 'Bearer caller' },
    },
    {
      name: 'proxy',
      url: `${api.url}/api/remote/llm-proxy/chat/completions`,
      headers: { authorization: `Bearer ${api.token}` },
    },
    {
      name: 'gateway',
      url: `${api.url}/api/remote/llm-proxy/chat/completions`,
      headers: { authorization: `Bearer ${api.gatewayKey}` },
    },
  ];
  const targets = all.filter((t) => wanted.has(t.name));
  console.log(
    `bench/proxy: ${os.cpus().length} cores (${os.cpus()[0]?.model}), node ${process.version}, database ${api.dialect}; ` +
      `proxy switches ${JSON.stringify(api.switches)}; ` +
      `${ROUNDS} rounds x (${REQUESTS} sequential + ${Math.ceil(REQUESTS / 2)} streamed + ${DURATION_S}s streamed at c=${CONCURRENCY} + ${DURATION_S}s autocannon at c=${CONCURRENCY}) per path`,
  );
  try {
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const t of order) {
        const s = await measure(t);
        samples.get(t.name)!.push(s);
        console.log(
          `  round ${round + 1} ${t.name.padEnd(12)} seq p50 ${fmt(s.seq.latency.p50, 3)} ms, ttfb p50 ${fmt(s.stream1.ttfb.p50, 3)} ms, ` +
            `${Math.round(s.rpsN)} req/s at c=${CONCURRENCY}, ${Math.round(s.cpuPerRequest)} us CPU/req here`,
        );
      }
    }

    const m = (name: string, pick: (s: Sample) => number) => median(samples.get(name)!.map(pick));
    const rows = targets.map((t) => ({
      name: t.name,
      seqP50: m(t.name, (s) => s.seq.latency.p50),
      seqP99: m(t.name, (s) => s.seq.latency.p99),
      ttfb1P50: m(t.name, (s) => s.stream1.ttfb.p50),
      ttfb1P99: m(t.name, (s) => s.stream1.ttfb.p99),
      rps1: m(t.name, (s) => s.seq.rps),
      latNP50: m(t.name, (s) => s.latN.p50),
      latNP99: m(t.name, (s) => s.latN.p99),
      ttfbNP50: m(t.name, (s) => s.streamN.ttfb.p50),
      ttfbNP99: m(t.name, (s) => s.streamN.ttfb.p99),
      rpsN: m(t.name, (s) => s.rpsN),
      cpu: m(t.name, (s) => s.cpuPerRequest),
    }));
    const direct = rows.find((r) => r.name === 'direct')!;
    const pass = rows.find((r) => r.name === 'pass-through') ?? direct;
    const cols = [
      'path',
      'seq p50',
      'seq p99',
      'added p50',
      'TTFB p50',
      'TTFB p99',
      'added TTFB',
      'req/s c=1',
      `p50 c=${CONCURRENCY}`,
      `p99 c=${CONCURRENCY}`,
      `TTFB p50 c=${CONCURRENCY}`,
      `req/s c=${CONCURRENCY}`,
      '/direct',
      '/pass-through',
      'CPU us/req',
    ];
    console.log(`\nmedian of ${ROUNDS} rounds (ms unless stated)\n`);
    console.log(`| ${cols.join(' | ')} |`);
    console.log(`|${cols.map(() => '---').join('|')}|`);
    for (const r of rows) {
      console.log(
        `| ${[
          r.name,
          fmt(r.seqP50, 3),
          fmt(r.seqP99, 3),
          r === direct ? '-' : fmt(r.seqP50 - direct.seqP50, 3),
          fmt(r.ttfb1P50, 3),
          fmt(r.ttfb1P99, 3),
          r === direct ? '-' : fmt(r.ttfb1P50 - direct.ttfb1P50, 3),
          Math.round(r.rps1),
          fmt(r.latNP50, 1),
          fmt(r.latNP99, 1),
          fmt(r.ttfbNP50, 2),
          Math.round(r.rpsN),
          fmt(r.rpsN / direct.rpsN),
          fmt(r.rpsN / pass.rpsN),
          r === direct ? '-' : Math.round(r.cpu),
        ].join(' | ')} |`,
      );
    }
    const proxy = rows.find((r) => r.name === 'proxy') ?? rows.at(-1)!;
    const forwarder = rows.find((r) => r.name === 'forwarder');
    const addedP50 = proxy.seqP50 - direct.seqP50;
    const vsPass = proxy.rpsN / pass.rpsN;
    // shared/PERF.md and issue 16: added p50 and requests/s at c=64 against the pass-through, per database.
    const limits = process.env.DATABASE_URL ? { added: 0.6, ratio: 0.6 } : { added: 0.35, ratio: 0.8 };
    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
    console.log(
      `\nPERF.md limits (${process.env.DATABASE_URL ? 'PostgreSQL' : 'SQLite'}): added p50 ${fmt(addedP50, 3)} ms ` +
        `(limit ${limits.added}: ${verdict(addedP50 <= limits.added)}); req/s at c=${CONCURRENCY} ${fmt(vsPass)} ` +
        `of the pass-through (limit ${limits.ratio}: ${verdict(vsPass >= limits.ratio)})` +
        (forwarder ? `; the bare forwarder alone reaches ${fmt(forwarder.rpsN / pass.rpsN)} of it.` : '.'),
    );
    const usage = await api.usage();
    console.log(
      `proxy accounting: ${usage.requests} requests and ${usage.tokens} tokens recorded for the bench session`,
    );
    const gateway = rows.find((r) => r.name === 'gateway');
    if (gateway)
      console.log(
        `gateway key vs session token: seq p50 ${fmt(gateway.seqP50, 3)} vs ${fmt(proxy.seqP50, 3)} ms, ` +
          `req/s at c=${CONCURRENCY} ${Math.round(gateway.rpsN)} vs ${Math.round(proxy.rpsN)} (${fmt(gateway.rpsN / proxy.rpsN)}), ` +
          `CPU ${Math.round(gateway.cpu)} vs ${Math.round(proxy.cpu)} us/req`,
      );

    if (values.profile) await profile(all.find((t) => t.name === values['profile-path'])!, os.tmpdir());
  } finally {
    await api.close();
    await forwarder.close();
    await passthrough.close();
    mock.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
  process.exit(0);
}
