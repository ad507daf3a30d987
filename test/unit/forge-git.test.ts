// The forge's git runner and branch-name rules (services/forge/git.ts, domain/forge/branch-name.ts):
// typed errors, timeouts that kill the whole process group, bounded output, a clean environment, and
// hostile branch names refused (cross-checked against git's own check-ref-format for valid ones).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import {
  GitCommandError,
  GitOutputTooLargeError,
  GitTimeoutError,
  InvalidBranchNameError,
  NotARepositoryError,
} from '../../domain/forge/errors.ts';
import {
  assertBranchName,
  branchNameProblem,
  git,
  isObjectId,
  workflowBranch,
} from '../../services/forge/git.ts';
import { makeGitRepo } from '../fixtures/git-repo.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-forge-git-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('a successful call returns stdout and code 0', async () => {
  const repo = makeGitRepo({ 'a.txt': 'a\n' });
  try {
    const r = await git(['rev-parse', 'HEAD'], { cwd: repo.path });
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), repo.head());
  } finally {
    repo.cleanup();
  }
});

test('not a repository and non-zero exits are typed errors with the stderr tail', async () => {
  await assert.rejects(git(['rev-parse', 'HEAD'], { cwd: tmp }), NotARepositoryError);
  const repo = makeGitRepo({ 'a.txt': 'a\n' });
  try {
    const err = await git(['rev-parse', '--verify', 'no-such-branch'], { cwd: repo.path }).catch((e) => e);
    assert.ok(err instanceof GitCommandError);
    assert.equal(err.exitCode, 128);
    assert.match(err.stderrTail, /Needed a single revision/);
    const soft = await git(['rev-parse', '--verify', 'no-such-branch'], { cwd: repo.path, check: false });
    assert.equal(soft.code, 128);
  } finally {
    repo.cleanup();
  }
});

test('a timeout kills the whole process group (a grandchild never gets to write)', async () => {
  const marker = path.join(tmp, 'grandchild-ran');
  const started = Date.now();
  const err = await git(['-c', `alias.slow=!sleep 1.5; touch ${marker}`, 'slow'], {
    cwd: tmp,
    timeoutMs: 300,
  }).catch((e) => e);
  assert.ok(err instanceof GitTimeoutError, String(err));
  assert.ok(Date.now() - started < 1400, 'returned at the timeout');
  await new Promise((r) => setTimeout(r, 2000));
  assert.equal(existsSync(marker), false, 'the sleeping grandchild was killed with the group');
});

test('output past the bound: an error, or cut there with `truncate`', async () => {
  const repo = makeGitRepo({ 'big.txt': 'x'.repeat(10_000) });
  try {
    await assert.rejects(
      git(['cat-file', 'blob', 'HEAD:big.txt'], { cwd: repo.path, maxOutputBytes: 1000 }),
      GitOutputTooLargeError,
    );
    const cut = await git(['cat-file', 'blob', 'HEAD:big.txt'], {
      cwd: repo.path,
      maxOutputBytes: 1000,
      truncate: true,
    });
    assert.equal(cut.truncated, true);
    assert.equal(cut.stdout.length, 1000);
  } finally {
    repo.cleanup();
  }
});

test('git gets a clean environment: none of the service variables, no prompts, no user config, no hooks', async () => {
  process.env.SVC_ENCRYPTION_KEY_FOR_TEST = 'do-not-leak-9f8e7d';
  process.env.DATABASE_URL_FOR_TEST = 'postgres://user:secret@db/x';
  try {
    const r = await git(['-c', 'alias.env=!env', 'env'], { cwd: tmp, home: tmp });
    assert.doesNotMatch(r.stdout, /do-not-leak|secret@db/);
    assert.match(r.stdout, /GIT_TERMINAL_PROMPT=0/);
    assert.match(r.stdout, /GIT_CONFIG_NOSYSTEM=1/);
    assert.match(r.stdout, /GIT_CONFIG_GLOBAL=\/dev\/null/);
    assert.match(r.stdout, new RegExp(`HOME=${tmp}`));
  } finally {
    delete process.env.SVC_ENCRYPTION_KEY_FOR_TEST;
    delete process.env.DATABASE_URL_FOR_TEST;
  }
  const hooks = await git(['config', '--get', 'core.hooksPath'], { cwd: tmp });
  assert.equal(hooks.stdout.trim(), '/dev/null');
});

test('branch names: hostile ones refused, with the reason', () => {
  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['-rf', /starts with "-"/],
    ['--upload-pack=evil', /starts with "-"/],
    ['feature/../../etc', /starting with "\."/],
    ['a..b', /\.\./],
    ['has space', /character/],
    ['tab\there', /character/],
    ['semi;colon', /character/],
    ['back\\slash', /character/],
    ['a~1', /character/],
    ['x^', /character/],
    ['a:b', /character/],
    ['what?', /character/],
    ['star*', /character/],
    ['br[ack', /character/],
    ['at@{1}', /character/],
    ['ünïcode', /character/],
    ['ends/', /ends with "\/"/],
    ['ends.', /ends with "\."/],
    ['x.lock', /\.lock/],
    ['a.lock/b', /\.lock/],
    ['a//b', /empty path component/],
    ['/abs', /empty path component/],
    ['.hidden', /starting with "\."/],
    ['a/.hidden', /starting with "\."/],
    ['@', /reserved/],
    ['HEAD', /reserved/],
    ['x'.repeat(201), /longer than 200/],
    ['new\nline', /character/],
  ];
  for (const [name, why] of bad) {
    const problem = branchNameProblem(name);
    assert.ok(problem, `${JSON.stringify(name)} must be refused`);
    assert.match(problem!, why, JSON.stringify(name));
    assert.throws(() => assertBranchName(name), InvalidBranchNameError);
  }
});

test('branch names: valid ones accepted, and git agrees', () => {
  for (const name of ['main', 'svc/wf-123', 'feature/a.b_c-d', 'release-1.2', 'a/b/c', 'x'.repeat(200)]) {
    assert.equal(branchNameProblem(name), null, name);
    execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'ignore' });
  }
  assert.equal(workflowBranch('abc-123'), 'svc/wf-abc-123');
  assert.throws(() => workflowBranch('../x'), InvalidBranchNameError);
  assert.throws(() => workflowBranch('a b'), InvalidBranchNameError);
});

test('object ids: full lowercase hex sha-1 or sha-256 only', () => {
  assert.equal(isObjectId('a'.repeat(40)), true);
  assert.equal(isObjectId('0123456789abcdef'.repeat(4)), true);
  for (const s of ['a'.repeat(39), 'A'.repeat(40), `-${'a'.repeat(39)}`, 'HEAD', 'g'.repeat(40), ''])
    assert.equal(isObjectId(s), false, s);
});
