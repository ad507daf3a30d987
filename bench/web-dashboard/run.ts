// bench/web-dashboard: the dashboard's first load with 1M messages (issue 14, "Measure": time to
// interactive < 1 s and < 300 kB of compressed JavaScript). Seeds N messages (default 1,000,000, over
// 30 days, 200 users in 4 tenants, 5 tools: seed.ts), starts the embedded stack (bench/support/stack.ts)
// twice, seeded and empty (the baseline, measured in the same run), and opens `/` in Chromium
// (playwright-core, /usr/bin/chromium) as the system administrator, a new browser context (cold
// cache, no connections) for every load. Per load:
//   time to interactive   navigation start -> every part of the dashboard shows its data (the page's
//                         data-ready markers, none "false") and the chart's canvas exists; checked
//                         on every animation frame, so to within one frame (~16 ms) of the render
//   JavaScript bytes      Resource Timing transferSize (compressed, with headers) and decodedBodySize
//                         of the .js files loaded before that point; their Content-Encoding
//   all bytes             the document and every resource loaded before that point (transferSize)
//   slowest API call      the /api/ request of the page that took longest (responseEnd - startTime)
// One warm-up load per stack is not counted; the figures are the p50 of `runs` loads, interleaved.
// A load that meets web/dist being rebuilt (others build in this tree) is retried, and counted once.
//
//   npm run bench -- web-dashboard [--messages 1000000] [--days 30] [--runs 9] [--sqlite-file F]
//   DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres npm run bench -- web-dashboard
// `--sqlite-file F` keeps the seeded SQLite database in F and reuses it when it holds messages.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Browser } from 'playwright-core';
import { ensureWebBuilt } from '../../bin/web-build.ts';
import { dayOf } from '../../domain/usage/read-dates.ts';
import { launchBrowser } from '../../test/support/browser.ts';
import { BENCH_ADMIN, type Stack, startStack } from '../support/stack.ts';
import { machine, percentile } from '../support/stats.ts';
import { type SeedResult, seedDashboard } from './seed.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '30' },
    runs: { type: 'string', default: '9' },
    'sqlite-file': { type: 'string' },
  },
});
const RUNS = Number(values.runs);

interface Load {
  tti: number;
  jsTransfer: number;
  jsDecoded: number;
  jsFiles: number;
  allTransfer: number;
  slowestApi: { path: string; ms: number };
  apis: Map<string, number>;
  jsEncodings: Set<string>;
  /** Where the time went: document received, last script received, first and last API call. */
  phases: { document: number; scripts: number; firstApi: number; lastApi: number };
}

/** In the page, on every animation frame: performance.now() once the dashboard shows all its data, else false. */
const READY = () => {
  const root = document.querySelector('.dashboard');
  if (root?.getAttribute('data-ready') !== 'true') return false;
  if (root.querySelector('[data-ready="false"]')) return false;
  if (!root.querySelector('.usage-chart canvas')) return false;
  return performance.now();
};

/** The page's files changed under it (web/dist rebuilt or missing): the load is retried. */
class RebuiltDuringLoad extends Error {}
let retried = 0;

/** firstLoad, retried (at most 5 times, 5 s apart) while web/dist is being rebuilt. */
async function load(browser: Browser, stack: Stack): Promise<Load> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await firstLoad(browser, stack);
    } catch (err) {
      if (!(err instanceof RebuiltDuringLoad) || attempt > 5) throw err;
      retried++;
      // Not rebuilt here: a second build racing the other one would empty web/dist again.
      await new Promise((r) => setTimeout(r, 5000));
    }
  }
}

async function firstLoad(browser: Browser, stack: Stack): Promise<Load> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const cookie = stack.admin!.cookie;
    const eq = cookie.indexOf('=');
    await ctx.addCookies([{ name: cookie.slice(0, eq), value: cookie.slice(eq + 1), url: stack.url }]);
    const page = await ctx.newPage();
    const jsEncodings = new Set<string>();
    // Another build of web/dist (others work in this tree) removes files mid-load: fail fast, retry.
    let assetFailed: (reason: Error) => void = () => {};
    const assetFailure = new Promise<never>((_, reject) => {
      assetFailed = reject;
    });
    assetFailure.catch(() => undefined);
    page.on('response', (r) => {
      const { pathname } = new URL(r.url());
      if (pathname.startsWith('/assets/') && r.status() >= 400)
        assetFailed(new RebuiltDuringLoad(`${pathname} answered ${r.status()}`));
      if (!pathname.endsWith('.js')) return;
      const encoding = r.headers()['content-encoding'];
      // An uncompressed script is named: it is below the twins' size threshold, or something is wrong.
      jsEncodings.add(encoding ?? `identity (${pathname})`);
    });
    const doc = await page.goto(`${stack.url}/`, { waitUntil: 'commit' });
    if (doc?.status() !== 200)
      throw new RebuiltDuringLoad(`GET / answered ${doc?.status()}: web/dist missing or being rebuilt?`);
    const ready = await Promise.race([
      page.waitForFunction(READY, undefined, { polling: 'raf', timeout: 60_000 }).catch(async (err) => {
        throw new Error(`the dashboard never became ready at ${page.url()}: ${(err as Error).message}`);
      }),
      assetFailure,
    ]);
    const tti = (await ready.jsonValue()) as number;
    const t = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      return {
        nav: nav.transferSize,
        navEnd: nav.responseEnd,
        resources: (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((e) => ({
          path: new URL(e.name).pathname + new URL(e.name).search,
          transfer: e.transferSize,
          decoded: e.decodedBodySize,
          start: e.startTime,
          end: e.responseEnd,
        })),
      };
    });
    const before = t.resources.filter((r) => r.start <= tti && r.end > 0);
    const js = before.filter((r) => r.path.split('?')[0]!.endsWith('.js'));
    const apis = new Map<string, number>();
    let slowestApi = { path: '-', ms: 0 };
    const phases = { document: t.navEnd, scripts: 0, firstApi: Number.POSITIVE_INFINITY, lastApi: 0 };
    for (const r of js) phases.scripts = Math.max(phases.scripts, r.end);
    for (const r of before) {
      if (!r.path.startsWith('/api/')) continue;
      phases.firstApi = Math.min(phases.firstApi, r.start);
      phases.lastApi = Math.max(phases.lastApi, r.end);
      const ms = r.end - r.start;
      apis.set(r.path.replace(/start=[^&]*&end=[^&]*/, 'start=…&end=…'), ms);
      if (ms > slowestApi.ms) slowestApi = { path: r.path, ms };
    }
    return {
      tti,
      jsTransfer: js.reduce((a, r) => a + r.transfer, 0),
      jsDecoded: js.reduce((a, r) => a + r.decoded, 0),
      jsFiles: js.length,
      allTransfer: t.nav + before.reduce((a, r) => a + r.transfer, 0),
      slowestApi,
      apis,
      jsEncodings,
      phases,
    };
  } finally {
    await ctx.close();
  }
}

async function main() {
  await ensureWebBuilt((line) => console.log(line));
  const keep = values['sqlite-file'];
  const reuse = keep !== undefined && !process.env.DATABASE_URL && existsSync(keep);
  let seeded: SeedResult | undefined;
  // 200 users in 4 tenants, 5 tools: the team bench/analytics loads, over the dashboard's month.
  const shape = {
    messages: Number(values.messages),
    users: 200,
    tenants: 4,
    tools: 5,
    days: Number(values.days),
  };
  const full = await startStack({
    admin: BENCH_ADMIN,
    sqliteFile: keep,
    prepare: async ({ database, now }) => {
      const [have] = await database.sql.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM daily_messages');
      if (reuse && Number(have!.n) > 0) return;
      seeded = await seedDashboard(database, { ...shape, today: dayOf(now()) }, (line) =>
        process.stderr.write(`\r${line}   `),
      );
      process.stderr.write('\n');
    },
  });
  const empty = await startStack({ admin: BENCH_ADMIN });
  const browser = await launchBrowser();
  const loads: Record<'full' | 'empty', Load[]> = { full: [], empty: [] };
  try {
    const [count] = await full.database.sql.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM daily_messages');
    console.log(
      `bench/web-dashboard  database=${full.database.dialect}  messages=${Number(count!.n).toLocaleString('en')}  users=${shape.users}  tenants=${shape.tenants}  tools=${shape.tools}  days=${shape.days}  runs=${RUNS} (+1 warm-up each, cold cache)  ${machine()}`,
    );
    if (seeded)
      console.log(
        `seeded ${seeded.messages.toLocaleString('en')} messages in ${seeded.seconds.toFixed(1)} s (${(seeded.messages / seeded.seconds).toFixed(0)} msg/s, multi-row INSERTs), aggregates and ANALYZE in ${seeded.aggregateSeconds.toFixed(1)} s`,
      );
    await load(browser, full);
    await load(browser, empty);
    for (let i = 0; i < RUNS; i++) {
      loads.full.push(await load(browser, full));
      loads.empty.push(await load(browser, empty));
    }
  } finally {
    await browser.close();
    await empty.close();
    await full.close();
  }
  report(loads.full, loads.empty);
  if (retried) console.log(`(${retried} loads retried: web/dist was rebuilt while they ran)`);
}

function report(full: Load[], empty: Load[]) {
  const p50 = (ls: Load[], f: (l: Load) => number) => percentile(ls.map(f), 0.5);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  const row = (label: string, a: string, b: string) =>
    console.log(`${label.padEnd(40)}${a.padStart(16)}${b.padStart(18)}`);
  console.log('');
  row('p50 of the first load (cold cache)', 'seeded', 'empty database');
  row('time to interactive', ms(p50(full, (l) => l.tti)), ms(p50(empty, (l) => l.tti)));
  row(
    `JavaScript transferred (${full[0]!.jsFiles} files)`,
    kb(p50(full, (l) => l.jsTransfer)),
    kb(p50(empty, (l) => l.jsTransfer)),
  );
  row('JavaScript decoded', kb(p50(full, (l) => l.jsDecoded)), kb(p50(empty, (l) => l.jsDecoded)));
  row('all bytes transferred', kb(p50(full, (l) => l.allTransfer)), kb(p50(empty, (l) => l.allTransfer)));
  row('slowest API call', ms(p50(full, (l) => l.slowestApi.ms)), ms(p50(empty, (l) => l.slowestApi.ms)));
  const slowest = new Map<string, number>();
  for (const l of full) slowest.set(l.slowestApi.path, (slowest.get(l.slowestApi.path) ?? 0) + 1);
  const [path, times] = [...slowest.entries()].sort((a, b) => b[1] - a[1])[0]!;
  console.log(`  slowest when seeded: ${path} (${times} of ${full.length} loads)`);
  console.log(
    `  JavaScript Content-Encoding: ${[...new Set(full.flatMap((l) => [...l.jsEncodings]))].join(', ')}`,
  );
  console.log('\np50 of where the time went (ms after navigation start)');
  for (const [label, f] of [
    ['document received', (l: Load) => l.phases.document],
    ['last script received', (l: Load) => l.phases.scripts],
    ['first API call sent', (l: Load) => l.phases.firstApi],
    ['last API answer received', (l: Load) => l.phases.lastApi],
    ['data shown (time to interactive)', (l: Load) => l.tti],
  ] as const)
    row(`  ${label}`, ms(p50(full, f)), ms(p50(empty, f)));
  console.log('\np50 per API call of the page (Resource Timing: request start -> response end)');
  const paths = [...new Set(full.flatMap((l) => [...l.apis.keys()]))].sort();
  for (const p of paths) {
    const of = (ls: Load[]) => ls.map((l) => l.apis.get(p)).filter((v): v is number => v !== undefined);
    const e = of(empty);
    row(`  GET ${p}`, ms(percentile(of(full), 0.5)), e.length ? ms(percentile(e, 0.5)) : '-');
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
