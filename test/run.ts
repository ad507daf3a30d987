// `npm test`: starts one real Temporal dev server for the whole run (in memory, free ports), then runs
// every test file with node's test runner. Pass file paths or substrings to run a subset.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { findTemporalCli } from '../bin/temporal-cli.ts';
import { startDevServer } from '../bin/temporal-dev.ts';
import { ensureWebBuilt } from '../bin/web-build.ts';

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = findTests('test').filter((f) => !filters.length || filters.some((x) => f.includes(x)));
if (!files.length) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

// Browser tests drive the built web application: build it once here when missing or stale.
if (files.some((f) => f.startsWith(path.join('test', 'browser'))))
  await ensureWebBuilt((l) => console.log(l));

const cliPath = await findTemporalCli({
  explicit: process.env.TEMPORAL_CLI_PATH,
  log: (l) => console.log(l),
});
const dev = await startDevServer({ cliPath, ephemeralPorts: true, inMemory: true });
console.log(
  `test Temporal dev server at ${dev.address}; database ${process.env.DATABASE_URL ? 'postgres' : 'sqlite'}`,
);

const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
    '--test-reporter=spec',
    ...files,
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, TEST_TEMPORAL_ADDRESS: dev.address, TEMPORAL_CLI_PATH: cliPath },
  },
);
const code: number = await new Promise((resolve) =>
  child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))),
);
await dev.stop();
process.exit(code);
