// Repository-declared runtimes in the local forge's CI (issue 15 item 5): a Node version the
// repository declares (.nvmrc) and that is installed under SVC_RUNTIMES_DIR/node/<version>/bin runs
// the CI (first on PATH, noted in the log); a declared version that is not installed falls back to the
// service's own Node with a note in the CI log. Real git, real database, a real runtimes directory
// (its `node` is a small script that says which one it is).
// store-independent: which Node runtime the local forge's CI runs
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { CiRun } from '../../../domain/forge/types.ts';
import { writeFiles } from '../../fixtures/git-repo.ts';
import { type ForgeFixture, startForge } from './support.ts';

let fx: ForgeFixture;
const runtimes = mkdtempSync(path.join(os.tmpdir(), 'svc-runtimes-'));
let nextId = 300;

before(async () => {
  const bin = path.join(runtimes, 'node', '99.1.0', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, 'node'), '#!/bin/sh\necho "fake node 99.1.0 $*"\n');
  chmodSync(path.join(bin, 'node'), 0o755);
  fx = await startForge({ ciTimeoutSeconds: 30, runtimesDir: runtimes });
});
after(async () => {
  await fx.close();
  rmSync(runtimes, { recursive: true, force: true });
});

async function ciWith(files: Record<string, string>): Promise<CiRun> {
  const project = fx.project({ '.svc/ci': 'node --version\n', 'app.txt': 'a\n', ...files });
  const repo = await fx.forge.ensureRepository({ id: nextId++, path: project.path });
  const wt = await fx.forge.createWorktree(repo, {
    branch: 'svc/rt',
    baseSha: await fx.forge.baseline(repo),
    path: fx.wtPath('rt'),
  });
  writeFiles(wt.path, { 'app.txt': 'b\n' });
  await fx.forge.commitAll(wt, 'b');
  const pr = await fx.forge.openPullRequest({ repo, head: wt.branch, base: 'main', title: 't' });
  const run = await fx.forge.runCi(pr);
  assert.notEqual(run.status, 'no_ci');
  return run as CiRun;
}

test('an installed declared runtime runs the CI, and the log says so', async () => {
  const run = await ciWith({ '.nvmrc': '99\n' });
  assert.equal(run.status, 'passed');
  assert.match(run.logTail!, /\[svc\] runtime: Node 99\.1\.0 \(declared 99 in \.nvmrc\)/);
  assert.match(run.logTail!, /fake node 99\.1\.0 --version/);
});

test('a declared runtime that is not installed: the service Node, with a note in the CI log', async () => {
  const run = await ciWith({ '.tool-versions': 'nodejs 98.0.0\n' });
  assert.equal(run.status, 'passed');
  assert.match(
    run.logTail!,
    /\[svc\] runtime: \.tool-versions declares Node 98\.0\.0, not installed .*99\.1\.0.*using the service's Node/,
  );
  assert.match(run.logTail!, new RegExp(`v${process.versions.node.replaceAll('.', '\\.')}`));
  assert.doesNotMatch(run.logTail!, /fake node/);
});

test('nothing declared: the service Node and no runtime note', async () => {
  const run = await ciWith({});
  assert.equal(run.status, 'passed');
  assert.doesNotMatch(run.logTail!, /\[svc\] runtime/);
});
