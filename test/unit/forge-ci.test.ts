// The local forge's CI declaration and runner (services/forge/local-ci.ts): what counts as declared,
// exit codes, the clean environment, the 64 KiB log tail, timeouts and cancellation that kill the
// whole process group (a background grandchild never survives), and commands outside the worktree.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { LOG_TAIL_BYTES, parseCiDeclaration, runCiCommand } from '../../services/forge/local-ci.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'svc-forge-ci-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const scratch = () => path.join(root, `scratch-${++n}`);

test('declaration: .svc/ci first line, else package.json test script, else none', () => {
  assert.deepEqual(parseCiDeclaration('\n  sh  scripts/ci.sh\t--fast \nignored\n', null), {
    kind: 'command',
    argv: ['sh', 'scripts/ci.sh', '--fast'],
    source: '.svc/ci',
  });
  assert.deepEqual(parseCiDeclaration(null, JSON.stringify({ scripts: { test: 'node --test' } })), {
    kind: 'command',
    argv: ['npm', 'test'],
    source: 'package.json',
  });
  // .svc/ci wins over package.json
  assert.equal(
    (parseCiDeclaration('make test', '{"scripts":{"test":"x"}}') as { argv: string[] }).argv[0],
    'make',
  );
  // declared but unusable: an error run, never "no CI"
  assert.equal(parseCiDeclaration('   \n\n', null).kind, 'invalid');
  assert.equal(parseCiDeclaration('#!/bin/sh\nexit 0\n', null).kind, 'invalid');
  assert.equal(parseCiDeclaration(null, '{"scripts": {"test": "no closing brace"').kind, 'invalid');
  for (const pkg of [
    null,
    '{}',
    '{"scripts":{"build":"tsc"}}',
    '{"scripts":{"test":"echo \\"Error: no test specified\\" && exit 1"}}',
  ])
    assert.equal(parseCiDeclaration(null, pkg).kind, 'none', String(pkg));
});

test('exit 0 passes, non-zero fails with its exit code and output', async () => {
  const ok = await runCiCommand({
    argv: ['sh', '-c', 'echo fine'],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 10_000,
  });
  assert.deepEqual([ok.status, ok.exitCode], ['passed', 0]);
  assert.match(ok.logTail, /fine/);
  const bad = await runCiCommand({
    argv: ['sh', '-c', 'echo broken >&2; exit 3'],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 10_000,
  });
  assert.deepEqual([bad.status, bad.exitCode], ['failed', 3]);
  assert.match(bad.logTail, /broken/);
});

test('a command that cannot start, or one outside the worktree, is an error run', async () => {
  const missing = await runCiCommand({
    argv: ['./no-such-script'],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 5000,
  });
  assert.equal(missing.status, 'error');
  assert.match(missing.logTail, /could not start: ENOENT/);
  const outside = await runCiCommand({
    argv: ['../../bin/sh'],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 5000,
  });
  assert.equal(outside.status, 'error');
  assert.match(outside.logTail, /outside the repository/);
});

test('the CI environment holds no service secrets; HOME and TMPDIR are scratch dirs removed afterwards', async () => {
  process.env.SVC_ENCRYPTION_KEY_CI_TEST = 'leak-me-not-42';
  const dir = scratch();
  try {
    const r = await runCiCommand({ argv: ['env'], cwd: root, scratchDir: dir, timeoutMs: 5000 });
    assert.equal(r.status, 'passed');
    assert.doesNotMatch(r.logTail, /leak-me-not|SVC_|DATABASE_URL|TEST_TEMPORAL/);
    assert.match(r.logTail, /^CI=true$/m);
    assert.match(r.logTail, new RegExp(`^HOME=${dir}/home$`, 'm'));
    assert.equal(existsSync(dir), false);
  } finally {
    delete process.env.SVC_ENCRYPTION_KEY_CI_TEST;
  }
});

test('the log keeps only the last 64 KiB', async () => {
  const r = await runCiCommand({
    argv: ['node', '-e', 'process.stdout.write("HEAD-MARK" + "x".repeat(200000) + "TAIL-MARK")'],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 10_000,
  });
  assert.equal(r.status, 'passed');
  assert.equal(Buffer.byteLength(r.logTail), LOG_TAIL_BYTES);
  assert.match(r.logTail, /TAIL-MARK$/);
  assert.doesNotMatch(r.logTail, /HEAD-MARK/);
});

test('timeout: an error run, and the whole process group is killed (a background grandchild too)', async () => {
  const marker = path.join(root, 'timeout-grandchild');
  writeFileSync(path.join(root, 'slow.sh'), `(sleep 2; touch ${marker}) &\nsleep 30\n`);
  const started = Date.now();
  const r = await runCiCommand({ argv: ['sh', 'slow.sh'], cwd: root, scratchDir: scratch(), timeoutMs: 400 });
  assert.equal(r.status, 'error');
  assert.equal(r.exitCode, null);
  assert.match(r.logTail, /timed out after 0 s; its process group was killed/);
  assert.ok(Date.now() - started < 5000);
  await new Promise((res) => setTimeout(res, 2500));
  assert.equal(existsSync(marker), false);
});

test('abort: a cancelled run (not a failure), process group killed; leftovers of a finished command killed too', async () => {
  const marker = path.join(root, 'cancel-grandchild');
  writeFileSync(path.join(root, 'cancel.sh'), `(sleep 2; touch ${marker}) &\nsleep 30\n`);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 300);
  const r = await runCiCommand({
    argv: ['sh', 'cancel.sh'],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 60_000,
    signal: ac.signal,
  });
  assert.equal(r.status, 'cancelled');
  assert.match(r.logTail, /cancelled/);
  // a command that exits 0 but leaves a background job: the job dies with the group
  const left = path.join(root, 'leftover');
  const done = await runCiCommand({
    argv: ['sh', '-c', `(sleep 1.5; touch ${left}) & echo done`],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 10_000,
  });
  assert.equal(done.status, 'passed');
  await new Promise((res) => setTimeout(res, 2500));
  assert.equal(existsSync(marker), false);
  assert.equal(existsSync(left), false);
  // aborted before start
  const pre = new AbortController();
  pre.abort();
  const never = await runCiCommand({
    argv: ['true'],
    cwd: root,
    scratchDir: scratch(),
    timeoutMs: 1000,
    signal: pre.signal,
  });
  assert.equal(never.status, 'cancelled');
});
