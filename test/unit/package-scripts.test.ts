// Every npm script that runs one of our files points at a file that exists (`npm run bench` once named
// a missing bench/run.ts), and `npm run bench` lists the benchmarks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

const scripts: Record<string, string> = JSON.parse(readFileSync('package.json', 'utf8')).scripts;

test('scripts run files that exist', () => {
  const referenced = Object.entries(scripts).flatMap(([name, cmd]) =>
    cmd
      .split(/\s+/)
      .filter((w) => /\.(ts|mjs|js)$/.test(w))
      .map((file) => [name, file] as const),
  );
  assert.ok(referenced.some(([name]) => name === 'bench'));
  for (const [name, file] of referenced) assert.ok(existsSync(file), `npm run ${name}: ${file} is missing`);
});

test('npm run bench without a name lists the benchmarks', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/run.ts'], { encoding: 'utf8' });
  for (const name of ['auth', 'clis', 'proxy', 'remote']) assert.ok(out.split('\n')[0]!.includes(name), name);
});
