// `npm test`: starts one real Temporal dev server for the whole run (in memory, free ports), then runs
// every test file with node's test runner. Pass file paths or substrings to run a subset.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findTemporalCli } from '../bin/temporal-cli.ts';
import { startDevServer } from '../bin/temporal-dev.ts';
import { ensureWebBuilt } from '../bin/web-build.ts';
import { startSharedBrowser } from './support/browser.ts';
import { bundleTestFiles } from './support/bundle-tests.ts';
import { prepareMigratedTemplate } from './support/database.ts';
import { BUNDLED_PROGRAMS } from './support/node-entry.ts';

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

// `--store-dependent` (CI's PostgreSQL run) leaves out the files that declare, in a line of their own,
// `// store-independent: <why>`: files whose subject is not the store (a real CLI's behaviour, the
// sandbox, the HTTP edge) and whose store calls other files already cover on both databases. They
// still run on SQLite, and on PostgreSQL when named without the flag.
const STORE_INDEPENDENT = /^\/\/ store-independent: \S/m;
const storeDependentOnly = process.argv.includes('--store-dependent');
const filters = process.argv.slice(2).filter((a) => a !== '--store-dependent');
const allFiles = findTests('test');
const matching = allFiles.filter((f) => !filters.length || filters.some((x) => f.includes(x)));
const files = storeDependentOnly
  ? matching.filter((f) => !STORE_INDEPENDENT.test(readFileSync(f, 'utf8')))
  : matching;
if (storeDependentOnly)
  console.log(
    `npm test --store-dependent: leaving out ${matching.length - files.length} store-independent file(s)`,
  );
if (!files.length) {
  console.error(
    matching.length
      ? `every matching file is store-independent: run it without --store-dependent`
      : `no test files match ${filters.join(' ')}`,
  );
  process.exit(1);
}

// What the reader is about to wait for, and how to wait less (figures from the last measured CI run on
// 2 cores: docs/contributors/tests-and-ci.md).
const areas = [...new Set(allFiles.map((f) => f.split(path.sep).slice(0, 2).join('/')))];
console.log(
  filters.length
    ? `npm test: ${files.length} matching file(s)`
    : `npm test: all ${files.length} test files; the last three measured CI runs took 21 to 23 minutes on 2 cores, ` +
        `this suite 19 to 21 beside the PostgreSQL suite and the fuzz (docs/contributors/tests-and-ci.md).\n` +
        `One area or file: npm test -- <area or substring>, e.g. npm test -- test/integration/llm-proxy. ` +
        `Areas: ${areas.join(', ')}`,
);

// Browser tests drive the built web application: build it once here when missing or stale, and start
// the one Chromium they all connect to (test/support/browser.ts).
const browserFiles = files.some((f) => f.startsWith(path.join('test', 'browser')));
if (browserFiles) await ensureWebBuilt((l) => console.log(l));
// Without one (no Chromium here), each browser file launches its own and fails with its own message.
const browser = browserFiles
  ? await startSharedBrowser().catch((err: Error) => {
      console.log(`no shared Chromium (${err.message.split('\n')[0]}); each browser file launches its own`);
      return undefined;
    })
  : undefined;

const cliPath = await findTemporalCli({
  explicit: process.env.TEMPORAL_CLI_PATH,
  log: (l) => console.log(l),
});
const dev = await startDevServer({ cliPath, ephemeralPorts: true, inMemory: true });
console.log(
  `test Temporal dev server at ${dev.address}; database ${process.env.DATABASE_URL ? 'postgres' : 'sqlite'}`,
);

// The test files' temporary directories (worktrees, agent homes, data dirs, ...) go under one directory
// per run, removed when the run ends: files that a killed process (the chaos tests) or a failed test
// never cleaned up do not pile up in /tmp. Sticky and world-writable like /tmp itself, because the
// isolation tests run agents as another account. SVC_KEEP_TEST_TMP=1 keeps it for a post-mortem.
const runTmp = mkdtempSync(path.join(os.tmpdir(), 'svc-test-run-'));
chmodSync(runTmp, 0o1777);
// Beside the spec output, each file's total test time (test/support/file-times-reporter.mjs): the
// slowest files are printed at the end, so a slow run says where its time went.
// TEST_FILE_TIMES=<file> keeps the whole per-file list (CI keeps it in test-artifacts/).
const timesFile = process.env.TEST_FILE_TIMES
  ? path.resolve(process.env.TEST_FILE_TIMES)
  : path.join(runTmp, 'file-times.jsonl');
// One database migrated to head, copied for each test file that wants a migrated one (support/database.ts).
// The unit tests open no database, so a run of them alone migrates nothing.
const needsDatabase = files.some((f) => !f.startsWith(path.join('test', 'unit')));
const template = needsDatabase
  ? await prepareMigratedTemplate(runTmp)
  : { env: {}, drop: async () => undefined };

// Each test file runs as one bundle (test/support/bundle-tests.ts says why); TEST_BUNDLE=0 runs sources.
const bundled = process.env.TEST_BUNDLE !== '0';
const bundleDir = path.join('node_modules', '.cache', 'svc-test-bundles', path.basename(runTmp));
const units = longestFirst(
  bundled && process.env.TEST_GROUPS !== '0' ? groupFiles(files) : files.map((f) => [f]),
);
const bundles = bundled ? await bundleTestFiles(units, bundleDir, BUNDLED_PROGRAMS) : undefined;
if (units.length < files.length)
  console.log(`${files.length} test files in ${units.length} processes (test/support/test-groups.ts)`);
const child = spawn(
  process.execPath,
  [
    ...(bundled ? [] : ['--import', 'tsx']),
    '--test',
    `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
    // A hung test fails after this long instead of holding the whole run (and CI) until it is killed.
    `--test-timeout=${process.env.TEST_TIMEOUT_MS ?? 480_000}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${path.resolve('test/support/file-times-reporter.mjs')}`,
    `--test-reporter-destination=${timesFile}`,
    ...(bundles?.entries ?? units.flat()),
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      ...template.env,
      ...browser?.env,
      TMPDIR: runTmp,
      // New password hashes at bcrypt's minimum cost, not the spec's 12 (domain/passwords.ts says why).
      SVC_TEST_BCRYPT_ROUNDS: process.env.SVC_TEST_BCRYPT_ROUNDS ?? '4',
      TEST_TEMPORAL_ADDRESS: dev.address,
      ...(bundles ? { TEST_BUNDLE_DIR: path.resolve(bundleDir) } : {}),
      TEMPORAL_CLI_PATH: cliPath,
    },
  },
);
const code: number = await new Promise((resolve) =>
  child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))),
);
await dev.stop();
await browser?.server.close().catch(() => undefined);
await template.drop().catch(() => undefined);
rmSync(bundleDir, { recursive: true, force: true });
printSlowestFiles(timesFile, 15);
if (process.env.SVC_KEEP_TEST_TMP) console.log(`test temporary files kept in ${runTmp}`);
else rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
process.exit(code);

/** Each file's test time in the last measured CI run (test/file-times.json); 30 s for a new file. */
function knownSeconds(): (file: string) => number {
  let known: Record<string, number> = {};
  try {
    known = JSON.parse(readFileSync(path.join('test', 'file-times.json'), 'utf8')) as Record<string, number>;
  } catch {}
  return (f) => known[f.split(path.sep).join('/')] ?? 30;
}

/**
 * The units in the order to start them: the longest first, by their files' test time in the last
 * measured CI run (test/file-times.json, from CI's test-artifacts/file-times-*.jsonl; the larger of
 * the two databases). With two at a time, a 6-minute file started last ran on alone for minutes at the
 * end of the run; started first, it overlaps the short ones. (Node's runner sorts the paths it is given:
 * the bundles are named after their place, support/bundle-tests.ts.)
 */
function longestFirst(list: string[][]): string[][] {
  const secondsOf = knownSeconds();
  const total = (unit: string[]) => unit.reduce((sum, f) => sum + secondsOf(f), 0);
  return [...list].sort((a, b) => total(b) - total(a) || a[0]!.localeCompare(b[0]!));
}

/**
 * Files that last took under TEST_GROUP_SECONDS (default 60) run in groups of about that length, one
 * process per group (test/support/test-groups.ts says why), neighbours by path together as they load
 * much the same modules. A file stays in a process of its own when it is longer, or when it says so in a
 * line of its own: `// test-process: own: <why>` (a file with top-level await must).
 */
function groupFiles(list: string[]): string[][] {
  const secondsOf = knownSeconds();
  const limit = Number(process.env.TEST_GROUP_SECONDS ?? 60);
  const own = (f: string) =>
    secondsOf(f) >= limit || /^\/\/ test-process: own: \S/m.test(readFileSync(f, 'utf8'));
  const alone = new Set(list.filter(own));
  const units: string[][] = [...alone].map((f) => [f]);
  let group: string[] = [];
  let seconds = 0;
  for (const f of list.filter((x) => !alone.has(x)).sort()) {
    if (group.length && seconds + secondsOf(f) > limit) {
      units.push(group);
      group = [];
      seconds = 0;
    }
    group.push(f);
    seconds += secondsOf(f);
  }
  if (group.length) units.push(group);
  return units;
}

function printSlowestFiles(file: string, count: number) {
  let lines: string[];
  try {
    lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return;
  }
  const rows = lines
    .map((l) => JSON.parse(l) as { file: string; ms: number; tests: number })
    .map((r) => ({ ...r, file: bundles ? bundles.sourceOf(r.file) : r.file }))
    .sort((a, b) => b.ms - a.ms);
  if (rows.length === 0) return;
  // The kept list names the test files, not their bundles.
  if (process.env.TEST_FILE_TIMES)
    writeFileSync(
      file,
      rows.map((r) => `${JSON.stringify({ ...r, file: path.relative(process.cwd(), r.file) })}\n`).join(''),
    );
  const total = rows.reduce((sum, r) => sum + r.ms, 0);
  console.log(
    `\nslowest test files (of ${rows.length}; ${(total / 1000).toFixed(0)} s of test time in all):`,
  );
  const byDir = new Map<string, number>();
  for (const r of rows) {
    const dir = path.relative(process.cwd(), r.file).split(path.sep).slice(0, 2).join('/');
    byDir.set(dir, (byDir.get(dir) ?? 0) + r.ms);
  }
  console.log(
    `  by directory: ${[...byDir]
      .sort((a, b) => b[1] - a[1])
      .map(([dir, ms]) => `${dir} ${(ms / 1000).toFixed(0)} s`)
      .join(', ')}`,
  );
  for (const r of rows.slice(0, count))
    console.log(
      `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${path.relative(process.cwd(), r.file)} (${r.tests})`,
    );
}
