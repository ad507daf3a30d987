// The local forge's merge stage on real Git and a real database (both dialects): CI red then green
// from a `.svc/ci` script, merge refused while CI has not passed (failing / pending / cancelled), a CI
// timeout and a cancellation, behind detection and sync (the workflow's worktree follows), a real
// conflict seen as dirty (mergeability, merge refusal, sync result), fast-forward and merge-commit
// merges, `ff` refused when behind, no declared CI, and branch cleanup.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { PullRequestStateError } from '../../../domain/forge/errors.ts';
import type { ForgeRepository, PullRequest, Worktree } from '../../../domain/forge/types.ts';
import { gitIn, writeFiles } from '../../fixtures/git-repo.ts';
import { type ForgeFixture, startForge } from './support.ts';

let fx: ForgeFixture;
let repo: ForgeRepository;
let bareDir: string;

// CI passes when status.txt says ok; it also prints an env probe to prove the env is clean.
const CI_SCRIPT =
  'echo "probe:$(env | grep -c SVC_)"\ngrep -qx ok status.txt || { echo "status is not ok" >&2; exit 7; }\necho "all good"\n';

before(async () => {
  process.env.SVC_ENCRYPTION_KEY = 'merge-test-secret-should-not-reach-ci';
  fx = await startForge({ ciTimeoutSeconds: 30 });
  const project = fx.project({
    '.svc/ci': 'sh ci.sh\n',
    'ci.sh': CI_SCRIPT,
    'status.txt': 'ok\n',
    'shared.txt': 'one\ntwo\nthree\n',
  });
  repo = await fx.forge.ensureRepository({ id: 1, path: project.path });
  bareDir = path.join(fx.testDb.dataDir, 'forge', '1.git');
});
after(async () => {
  delete process.env.SVC_ENCRYPTION_KEY;
  await fx.close();
});

async function branchWith(
  name: string,
  files: Record<string, string | null>,
  baseSha?: string,
): Promise<Worktree> {
  const wt = await fx.forge.createWorktree(repo, {
    branch: name,
    baseSha: baseSha ?? (await fx.forge.baseline(repo)),
    path: fx.wtPath(name.replaceAll('/', '-')),
  });
  writeFiles(wt.path, files);
  assert.ok(await fx.forge.commitAll(wt, `change on ${name}`));
  return wt;
}

const open = (wt: Worktree, title = wt.branch): Promise<PullRequest> =>
  fx.forge.openPullRequest({ repo, head: wt.branch, base: repo.defaultBranch, title });

test('CI red then green; merge refused while CI has not passed; then merged fast-forward', async () => {
  const wt = await branchWith('svc/wf-red', { 'status.txt': 'bad\n', 'feature.txt': 'f\n' });
  let pr = await open(wt);

  // no CI run yet: pending
  const none = await fx.forge.merge(pr, { method: 'ff' });
  assert.equal(none.merged, false);
  assert.equal(!none.merged && none.category, 'pending');
  assert.equal(!none.merged && none.mergeability?.requiredCheck?.status, 'missing');

  const red = await fx.forge.runCi(pr);
  assert.equal(red.status, 'failed');
  assert.equal(red.exitCode, 7);
  assert.equal(red.command, 'sh ci.sh');
  assert.equal(red.headSha, pr.headSha);
  assert.match(red.logTail!, /status is not ok/);
  assert.match(red.logTail!, /probe:0$/m, 'the service env never reaches CI');
  assert.ok(red.startedAt && red.finishedAt && red.finishedAt >= red.startedAt);
  const m = await fx.forge.mergeability(pr);
  assert.equal(m.state, 'blocked');
  assert.deepEqual(m.requiredCheck, { name: 'ci', status: 'failed' });
  const refused = await fx.forge.merge(pr, { method: 'ff' });
  assert.equal(!refused.merged && refused.category, 'failing');
  assert.equal(gitIn(bareDir, 'rev-parse', 'main'), pr.baseSha, 'main untouched');

  // the fix is a new head: its CI starts from nothing
  writeFiles(wt.path, { 'status.txt': 'ok\n' });
  await fx.forge.commitAll(wt, 'fix status');
  pr = await fx.forge.getPullRequest(repo, pr.number);
  assert.equal(pr.headSha, gitIn(wt.path, 'rev-parse', 'HEAD'));
  assert.equal(await fx.forge.latestCi(pr), null);
  const green = await fx.forge.runCi(pr);
  assert.equal(green.status, 'passed');
  assert.match(green.status === 'passed' ? green.logTail! : '', /all good/);
  assert.equal((await fx.forge.mergeability(pr)).state, 'clean');
  assert.deepEqual(
    (await fx.forge.ciRunsOf(pr)).map((r) => r.status),
    ['failed', 'passed'],
  );

  const merged = await fx.forge.merge(pr, { method: 'ff' });
  assert.deepEqual(merged, { merged: true, sha: pr.headSha, method: 'ff' });
  assert.equal(gitIn(bareDir, 'rev-parse', 'main'), pr.headSha);
  const after = await fx.forge.getPullRequest(repo, pr.number);
  assert.equal(after.status, 'merged');
  assert.equal(after.mergeCommitSha, pr.headSha);
  assert.ok(after.mergedAt);
  // merging again is a rule refusal, never a second merge
  const again = await fx.forge.merge(after, { method: 'merge' });
  assert.equal(!again.merged && again.category, 'rule');
  // the diff of a merged PR is still its own change
  const diff = await fx.forge.prDiff(after);
  assert.deepEqual(
    diff.files.map((f) => f.path),
    ['feature.txt'],
    'status.txt went bad and back: not part of the effective diff',
  );

  // branch cleanup: refused while checked out, the default branch never
  await assert.rejects(fx.forge.deleteBranch(repo, wt.branch), PullRequestStateError);
  await fx.forge.removeWorktree(wt);
  await fx.forge.deleteBranch(repo, wt.branch);
  assert.equal(gitIn(bareDir, 'branch', '--list', wt.branch), '');
  await assert.rejects(fx.forge.deleteBranch(repo, 'main'), PullRequestStateError);
  await fx.forge.deleteBranch(repo, wt.branch); // already gone: a no-op
});

test('behind detection and sync: the base is merged into the head, the worktree follows, CI starts over', async () => {
  const baseline = await fx.forge.baseline(repo);
  const first = await branchWith('svc/wf-first', { 'first.txt': '1\n' }, baseline);
  const second = await branchWith('svc/wf-second', { 'second.txt': '2\n' }, baseline);
  const pr1 = await open(first);
  const pr2 = await open(second);
  assert.equal((await fx.forge.isBehind(pr2)).behind, false);
  assert.equal((await fx.forge.runCi(pr1)).status, 'passed');
  assert.equal((await fx.forge.runCi(pr2)).status, 'passed');
  const m1 = await fx.forge.merge(pr1, { method: 'merge' });
  assert.equal(m1.merged, true);
  // a merge commit: base first parent, head second
  const parents = gitIn(bareDir, 'rev-list', '--parents', '-n', '1', 'main').split(' ');
  assert.deepEqual(parents.slice(1), [baseline, pr1.headSha]);
  assert.equal(m1.merged && m1.sha, parents[0]);
  assert.equal(gitIn(bareDir, 'log', '-1', '--format=%an', 'main'), 'svc orchestrator');

  const behind = await fx.forge.isBehind(pr2);
  assert.deepEqual({ behind: behind.behind, behindBy: behind.behindBy }, { behind: true, behindBy: 2 });
  assert.equal((await fx.forge.mergeability(pr2)).state, 'behind');
  const ff = await fx.forge.merge(pr2, { method: 'ff' });
  assert.equal(!ff.merged && ff.category, 'rule');
  assert.match(!ff.merged ? ff.reason : '', /behind/);

  const synced = await fx.forge.syncWithBase(pr2);
  assert.equal(synced.status, 'synced');
  const head = synced.status === 'synced' ? synced.headSha : '';
  assert.equal(synced.status === 'synced' && synced.previousHeadSha, pr2.headSha);
  assert.equal(gitIn(second.path, 'rev-parse', 'HEAD'), head, 'the PR worktree followed the sync');
  assert.equal(readFileSync(path.join(second.path, 'first.txt'), 'utf8'), '1\n');
  assert.equal(gitIn(second.path, 'status', '--porcelain'), '');
  const fresh = await fx.forge.getPullRequest(repo, pr2.number);
  assert.equal(fresh.headSha, head);
  assert.equal((await fx.forge.isBehind(fresh)).behind, false);
  assert.deepEqual(await fx.forge.syncWithBase(fresh), { status: 'up_to_date', headSha: head });
  // the CI that passed was for the old head
  const m = await fx.forge.mergeability(fresh);
  assert.deepEqual([m.state, m.requiredCheck?.status], ['blocked', 'missing']);
  assert.equal((await fx.forge.runCi(fresh)).status, 'passed');
  const done = await fx.forge.merge(fresh, { method: 'ff' });
  assert.deepEqual(done, { merged: true, sha: head, method: 'ff' });
  await fx.forge.removeWorktree(first);
  await fx.forge.removeWorktree(second);
});

test('a real conflict is dirty: mergeability lists the files, merge refuses with `conflict`, sync changes nothing', async () => {
  const baseline = await fx.forge.baseline(repo);
  const left = await branchWith('svc/wf-left', { 'shared.txt': 'one\nLEFT\nthree\n' }, baseline);
  const right = await branchWith('svc/wf-right', { 'shared.txt': 'one\nRIGHT\nthree\n' }, baseline);
  const prL = await open(left);
  const prR = await open(right);
  await fx.forge.runCi(prL);
  await fx.forge.runCi(prR);
  assert.equal((await fx.forge.merge(prL, { method: 'ff' })).merged, true);

  const m = await fx.forge.mergeability(prR);
  assert.equal(m.state, 'dirty');
  assert.deepEqual(m.conflictFiles, ['shared.txt']);
  const refused = await fx.forge.merge(prR, { method: 'merge' });
  assert.equal(!refused.merged && refused.category, 'conflict');
  const mainBefore = gitIn(bareDir, 'rev-parse', 'main');
  const headBefore = gitIn(right.path, 'rev-parse', 'HEAD');
  const sync = await fx.forge.syncWithBase(prR);
  assert.deepEqual(sync, { status: 'conflict', files: ['shared.txt'] });
  assert.equal(gitIn(bareDir, 'rev-parse', 'main'), mainBefore);
  assert.equal(gitIn(right.path, 'rev-parse', 'HEAD'), headBefore);
  assert.equal(readFileSync(path.join(right.path, 'shared.txt'), 'utf8'), 'one\nRIGHT\nthree\n');
  // no leftover sync worktrees
  assert.equal(
    gitIn(bareDir, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.includes('/sync/')).length,
    0,
  );
  const closed = await fx.forge.closePullRequest(prR);
  assert.equal(closed.status, 'closed');
  const m2 = await fx.forge.mergeability(closed);
  assert.equal(m2.state, 'blocked');
  await assert.rejects(fx.forge.syncWithBase(closed), PullRequestStateError);
});

test('CI timeout is an error run (process group killed); a cancelled run is pending, not failing', async () => {
  const wt = await branchWith('svc/wf-slow', { 'ci.sh': 'echo start\nsleep 30\n' });
  const pr = await open(wt);
  const started = Date.now();
  const timedOut = await fx.forge.runCi(pr, { timeoutSeconds: 1 });
  assert.equal(timedOut.status, 'error');
  assert.ok(Date.now() - started < 10_000);
  assert.match(timedOut.status === 'error' ? timedOut.logTail! : '', /timed out after 1 s/);
  const refusedErr = await fx.forge.merge(pr, { method: 'merge' });
  assert.equal(!refusedErr.merged && refusedErr.category, 'failing');

  const ac = new AbortController();
  setTimeout(() => ac.abort(), 500);
  const cancelled = await fx.forge.runCi(pr, { signal: ac.signal });
  assert.equal(cancelled.status, 'cancelled');
  const refused = await fx.forge.merge(pr, { method: 'merge' });
  assert.equal(!refused.merged && refused.category, 'pending');
  assert.match(!refused.merged ? refused.reason : '', /not a code failure/);
  // no CI worktree is left behind
  assert.equal(
    gitIn(bareDir, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.includes('/ci/')).length,
    0,
  );
});

test('a change cannot drop its own CI: the base branch declaration runs on the head code', async () => {
  const dropped = await branchWith('svc/wf-drop-ci', { '.svc/ci': null, 'ci.sh': null, 'x.txt': 'x\n' });
  const pr = await open(dropped);
  const run = await fx.forge.runCi(pr);
  assert.equal(run.status, 'failed', 'the base declares `sh ci.sh`; the head deleted ci.sh');
  assert.equal(run.status === 'failed' && run.command, 'sh ci.sh');
  const refused = await fx.forge.merge(pr, { method: 'merge' });
  assert.equal(!refused.merged && refused.category, 'failing');
  // nor weaken it: a head that rewrites .svc/ci to `true` still runs the base's command
  const weakened = await branchWith('svc/wf-weak-ci', { '.svc/ci': 'true\n', 'status.txt': 'bad\n' });
  const prW = await open(weakened);
  const runW = await fx.forge.runCi(prW);
  assert.equal(runW.status === 'failed' && runW.command, 'sh ci.sh');
});

test('no declared CI: runCi says `no_ci`, no required check, merge allowed; an invalid declaration is an error run', async () => {
  const plain = fx.project({ 'a.txt': 'a\n' });
  const repo2 = await fx.forge.ensureRepository({ id: 2, path: plain.path });
  const mk = async (branch: string, files: Record<string, string>) => {
    const wt = await fx.forge.createWorktree(repo2, {
      branch,
      baseSha: await fx.forge.baseline(repo2),
      path: fx.wtPath(branch.replaceAll('/', '-')),
    });
    writeFiles(wt.path, files);
    await fx.forge.commitAll(wt, branch);
    return fx.forge.openPullRequest({ repo: repo2, head: branch, base: 'main', title: branch });
  };
  const pr = await mk('svc/wf-noci', { 'plain.txt': 'p\n' });
  const r = await fx.forge.runCi(pr);
  assert.equal(r.status, 'no_ci');
  assert.match(r.status === 'no_ci' ? r.reason : '', /declares no CI/);
  assert.equal((await fx.forge.ciRunsOf(pr)).length, 0);
  assert.equal((await fx.forge.mergeability(pr)).requiredCheck, null);

  // the head adds a CI of its own (the base has none): it applies
  const added = await mk('svc/wf-addci', { '.svc/ci': 'sh -c "exit 0"\n' });
  const runAdded = await fx.forge.runCi(added);
  assert.equal(runAdded.status, 'failed', 'no quoting: sh gets `"exit` and fails');
  const bad = await mk('svc/wf-badci', { '.svc/ci': '#!/bin/sh\nexit 0\n' });
  const runBad = await fx.forge.runCi(bad);
  assert.equal(runBad.status, 'error');
  assert.match(runBad.status === 'error' ? runBad.logTail! : '', /must start with the command line/);
  assert.equal(!(await fx.forge.merge(bad, { method: 'merge' })).merged && 'refused', 'refused');
  const badJson = await mk('svc/wf-badjson', { 'package.json': '{"scripts": {' });
  assert.equal((await fx.forge.runCi(badJson)).status, 'error');

  assert.equal((await fx.forge.merge(pr, { method: 'merge' })).merged, true);
});
