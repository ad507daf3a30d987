// The GitHub forge against the local GitHub fake: clone, worktree, commit, push (token only in git's
// environment), pull requests (create, reuse, update, draft), checks and their logs, mergeability,
// merge, branch delete, issue read/close, error mapping and redaction.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { classifyForgeError } from '../../../domain/forge/error-class.ts';
import {
  CiEvidenceInsufficientError,
  ForgeNotFoundError,
  ForgePermissionError,
  ForgeTransientError,
} from '../../../domain/forge/errors.ts';
import { createEgressGuard } from '../../../services/egress/guard.ts';
import { GitHubForge } from '../../../services/forge/github/github-forge.ts';
import { gitIn, writeFiles } from '../../fixtures/git-repo.ts';
import { type GitHubFixture, startGitHubForge, statusFileRule, testForgeOptions } from './github-support.ts';

let fx: GitHubFixture;
before(async () => {
  fx = await startGitHubForge({ 'status.txt': 'ok\n', 'shared.txt': 'a\nb\nc\n' });
  fx.fake.ciRule(statusFileRule());
});
after(async () => {
  assert.deepEqual(fx.fake.unrouted, []);
  await fx.close();
});

/** Every file under `dir` whose text contains `needle` (config files, logs, refs...). */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && statSync(p).size < 4 * 1024 * 1024 && readFileSync(p).includes(needle))
        hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

test('clone, commit, push and open a PR; the token is never written to disk', async () => {
  const wt = await fx.branch('svc/wf-basic', { 'feature.txt': 'hello\n', 'status.txt': 'ok\n' });
  assert.equal(fx.fake.branchSha(fx.repoKey, 'svc/wf-basic'), gitIn(wt.path, 'rev-parse', 'HEAD'));
  const pr = await fx.openPr(wt);
  assert.equal(pr.status, 'open');
  assert.equal(pr.headBranch, 'svc/wf-basic');
  assert.equal(pr.headSha, gitIn(wt.path, 'rev-parse', 'HEAD'));
  // a retried open returns the same PR (idempotent)
  const again = await fx.openPr(wt);
  assert.equal(again.number, pr.number);
  assert.equal(fx.fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pulls')).length, 1);
  // updated title
  assert.equal((await fx.forge.updatePullRequest(pr, { title: 'Better title' })).title, 'Better title');
  // diff: the effective PR diff
  const diff = await fx.forge.prDiff(pr);
  assert.deepEqual(
    diff.files.map((f) => f.path),
    ['feature.txt'],
  );
  assert.match(diff.diff, /\+hello/);
  // nothing on disk holds the token or its Basic form
  const b64 = Buffer.from(`x-access-token:${fx.fake.token}`).toString('base64');
  assert.deepEqual(filesContaining(fx.dataDir, fx.fake.token), []);
  assert.deepEqual(filesContaining(fx.dataDir, b64), []);
  const bareConfig = readFileSync(path.join(fx.forge.gitDir(fx.repoKey), 'config'), 'utf8');
  assert.doesNotMatch(bareConfig, /extraheader|x-access-token/i);
});

test('git never gets the token in its arguments (an argv-recording git shim on PATH)', async () => {
  const shimDir = mkdtempSync(path.join(os.tmpdir(), 'svc-git-shim-'));
  const argvLog = path.join(shimDir, 'argv.log');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(
    path.join(shimDir, 'git'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec '${realGit}' "$@"\n`,
  );
  chmodSync(path.join(shimDir, 'git'), 0o755);
  const savedPath = process.env.PATH;
  process.env.PATH = `${shimDir}:${savedPath}`;
  try {
    const wt = await fx.branch('svc/wf-argv', { 'argv.txt': 'x\n' });
    await fx.forge.baseline(fx.repo);
    await fx.forge.syncWithBase(await fx.openPr(wt));
  } finally {
    process.env.PATH = savedPath;
  }
  const argv = readFileSync(argvLog, 'utf8');
  assert.match(argv, /push/, 'the shim saw the push');
  assert.match(argv, /fetch/, 'the shim saw the fetch');
  assert.ok(!argv.includes(fx.fake.token));
  assert.ok(!argv.includes(Buffer.from(`x-access-token:${fx.fake.token}`).toString('base64')));
  assert.doesNotMatch(argv, /extraheader|Authorization/i);
  rmSync(shimDir, { recursive: true, force: true });
});

test('checks: passed, failed with a fingerprint from the job log; the log store never sees the token', async () => {
  const wt = await fx.branch('svc/wf-red', { 'status.txt': 'broken\n' });
  const pr = await fx.openPr(wt);
  const ci = await fx.forge.runCi(pr);
  assert.ok(ci.status === 'failed' && ci.logTail?.includes('expected ok'), JSON.stringify(ci));
  const checks = await fx.forge.checks(pr);
  assert.equal(checks.length, 1);
  assert.equal(checks[0]!.state, 'failed');
  assert.match(checks[0]!.fingerprint!, /^ci:[0-9a-f]{16}$/);
  assert.equal(fx.fake.logStoreSawAuth, 0);
  assert.ok(fx.fake.requests.some((r) => r.path.startsWith('/_logs/') && r.status === 200));
  // same failure on a new head (digits differ) -> same fingerprint
  writeFiles(wt.path, { 'other.txt': 'x\n' });
  await fx.forge.commitAll(wt, 'not a fix');
  await fx.forge.push(wt);
  const fresh = await fx.forge.getPullRequest(fx.repo, pr.number);
  await fx.forge.runCi(fresh);
  const again = await fx.forge.checks(fresh);
  assert.equal(again[0]!.fingerprint, checks[0]!.fingerprint);
});

test('no check run reported within the grace period -> no_ci; a commit status counts as CI', async () => {
  fx.fake.ciRule(() => []);
  try {
    const wt = await fx.branch('svc/wf-noci', { 'n.txt': 'n\n' });
    const pr = await fx.openPr(wt);
    const started = Date.now();
    const r = await fx.forge.runCi(pr);
    assert.equal(r.status, 'no_ci');
    assert.ok(Date.now() - started >= 300, 'waited for the grace period');
    assert.deepEqual(await fx.forge.checks(pr), []);
    fx.fake.setStatus(fx.repoKey, pr.headSha, 'external-ci', 'failure', 'lint: 3 problems');
    const st = await fx.forge.runCi(pr);
    assert.ok(st.status === 'failed' && st.logTail === 'lint: 3 problems', JSON.stringify(st));
    const ev = await fx.forge.checks(pr);
    assert.deepEqual([ev[0]!.name, ev[0]!.state], ['external-ci', 'failed']);
    assert.match(ev[0]!.fingerprint!, /^external-ci:/);
  } finally {
    fx.fake.ciRule(statusFileRule());
  }
});

test('logs not ready -> logs_not_ready; 403 -> no_permission (structured class, with a hint)', async () => {
  const wt = await fx.branch('svc/wf-logs', { 'status.txt': 'nope\n' });
  const pr = await fx.openPr(wt);
  await fx.forge.runCi(pr);
  fx.fake.logsNotReady(1);
  const notReady = await fx.forge.checks(pr).catch((e) => e);
  assert.ok(notReady instanceof CiEvidenceInsufficientError);
  assert.equal(notReady.reason, 'logs_not_ready');
  assert.deepEqual(classifyForgeError(notReady), {
    kind: 'class',
    error: { class: 'ci_evidence_insufficient', reason: 'logs_not_ready' },
  });
  assert.equal((await fx.forge.checks(pr))[0]!.state, 'failed', 'ready on the next poll');
  fx.fake.logsForbidden(true);
  try {
    const denied = await fx.forge.latestCi(pr).catch((e) => e);
    assert.ok(denied instanceof CiEvidenceInsufficientError);
    assert.equal(denied.reason, 'no_permission');
    assert.match(denied.message, /actions: read/);
  } finally {
    fx.fake.logsForbidden(false);
  }
});

test('mergeable null while GitHub computes is read again; clean PR merges', async () => {
  const wt = await fx.branch('svc/wf-merge', { 'm.txt': 'm\n' });
  const pr = await fx.openPr(wt);
  await fx.forge.runCi(pr);
  fx.fake.computingReads(3);
  const m = await fx.forge.mergeability(pr);
  assert.equal(m.state, 'clean');
  const merged = await fx.forge.merge(pr, { method: 'merge', message: 'Merge it' });
  assert.ok(merged.merged);
  assert.equal(fx.fake.branchSha(fx.repoKey, 'main'), merged.sha);
  assert.equal(fx.fake.fileAt(fx.repoKey, 'main', 'm.txt'), 'm');
  const after = await fx.forge.getPullRequest(fx.repo, pr.number);
  assert.equal(after.status, 'merged');
  assert.equal(after.mergeCommitSha, merged.sha);
  // branch delete: local and on GitHub; never the default branch
  await fx.forge.removeWorktree(wt);
  await fx.forge.deleteBranch(fx.repo, wt.branch);
  assert.equal(fx.fake.branchSha(fx.repoKey, wt.branch), null);
  await fx.forge.deleteBranch(fx.repo, wt.branch); // gone already: fine
  await assert.rejects(fx.forge.deleteBranch(fx.repo, 'main'), /default branch/);
  // the new baseline is GitHub's main
  assert.equal(await fx.forge.baseline(fx.repo), merged.sha);
});

test('a draft PR is opened as draft and refused as a rule', async () => {
  const wt = await fx.branch('svc/wf-draft', { 'd.txt': 'd\n' });
  const pr = await fx.openPr(wt, { draft: true });
  assert.equal(pr.draft, true);
  await fx.forge.runCi(pr);
  const m = await fx.forge.mergeability(pr);
  assert.deepEqual([m.state, m.reason], ['blocked', 'pull request is a draft']);
  const r = await fx.forge.merge(pr, { method: 'merge' });
  assert.ok(!r.merged && r.category === 'rule' && /draft/.test(r.reason));
  await fx.forge.closePullRequest(pr);
  assert.equal((await fx.forge.getPullRequest(fx.repo, pr.number)).status, 'closed');
});

test('issues: read, close with one comment (retry-safe), PR numbers are not issues', async () => {
  const n = fx.fake.createIssue(fx.repoKey, 'Add a widget', 'Acceptance: the widget exists.');
  const issue = await fx.forge.issues.readIssue(fx.repo, n);
  assert.deepEqual(
    [issue.number, issue.title, issue.body, issue.state],
    [n, 'Add a widget', 'Acceptance: the widget exists.', 'open'],
  );
  assert.match(issue.url, new RegExp(`/acme/.+/issues/${n}$`));
  await fx.forge.issues.closeIssue(fx.repo, n, 'Confirmed by the acceptance check.');
  await fx.forge.issues.closeIssue(fx.repo, n, 'Confirmed by the acceptance check.');
  const stored = fx.fake.issue(fx.repoKey, n)!;
  assert.equal(stored.state, 'closed');
  assert.equal(stored.stateReason, 'completed');
  assert.equal(stored.comments.length, 1);
  assert.equal((await fx.forge.issues.readIssue(fx.repo, n)).state, 'closed');
  await assert.rejects(fx.forge.issues.readIssue(fx.repo, 9999), ForgeNotFoundError);
  const wt = await fx.branch('svc/wf-issue-pr', { 'i.txt': 'i\n' });
  const pr = await fx.openPr(wt);
  await assert.rejects(fx.forge.issues.readIssue(fx.repo, pr.number), /is a pull request/);
});

test('HTTP errors map to forge errors and classes; the token is redacted everywhere', async () => {
  // Anything printed meanwhile (console: Octokit's default log, stray debug output) is captured.
  const captured: string[] = [];
  const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const saved = methods.map((m) => console[m]);
  for (const m of methods)
    console[m] = (...args: unknown[]) => {
      captured.push(args.map(String).join(' '));
    };
  const errors: unknown[] = [];
  try {
    fx.fake.failNext(503);
    errors.push(await fx.forge.getPullRequest(fx.repo, 1).catch((e) => e));
    fx.fake.failNext(403);
    errors.push(await fx.forge.getPullRequest(fx.repo, 1).catch((e) => e));
    errors.push(await fx.forge.getPullRequest(fx.repo, 4242).catch((e) => e));
    // a wrong token: 401 from the API, and git refuses to push
    const wrong = new GitHubForge({ ...testForgeOptions(fx.fake, fx.dataDir), token: `${fx.fake.token}x` });
    errors.push(await wrong.getPullRequest(fx.repo, 1).catch((e) => e));
    const wt = await fx.branch('svc/wf-auth', { 'a.txt': 'a\n' });
    writeFiles(wt.path, { 'a2.txt': 'a2\n' });
    await fx.forge.commitAll(wt, 'unpushed');
    errors.push(await wrong.push(wt).catch((e) => e));
    // an API URL the egress policy refuses
    const blocked = new GitHubForge({
      ...testForgeOptions(fx.fake, fx.dataDir),
      egress: createEgressGuard([]),
    });
    errors.push(await blocked.getPullRequest(fx.repo, 1).catch((e) => e));
  } finally {
    methods.forEach((m, i) => {
      console[m] = saved[i]!;
    });
  }
  const [e503, e403, e404, e401, ePush, eEgress] = errors as Error[];
  assert.ok(e503 instanceof ForgeTransientError && e503.httpStatus === 503);
  assert.deepEqual(classifyForgeError(e503), {
    kind: 'class',
    error: { class: 'transient_api', httpStatus: 503 },
  });
  assert.ok(e403 instanceof ForgePermissionError);
  assert.equal(classifyForgeError(e403)?.kind, 'visible');
  assert.ok(e404 instanceof ForgeNotFoundError);
  assert.ok(e401 instanceof ForgePermissionError && /Bad credentials/.test(e401.message));
  assert.ok(ePush instanceof Error && /git push failed/.test(ePush.message), String(ePush));
  assert.ok(eEgress instanceof ForgePermissionError && /loopback/.test(eEgress.message), String(eEgress));
  const wrongToken = `${fx.fake.token}x`;
  for (const e of errors) {
    const text = `${(e as Error).message} ${JSON.stringify(e)} ${(e as Error).stack}`;
    assert.ok(!text.includes(fx.fake.token), `token in ${text}`);
    assert.ok(!text.includes(Buffer.from(`x-access-token:${wrongToken}`).toString('base64')));
  }
  assert.ok(!captured.join('').includes(fx.fake.token), 'token in captured output');
});
