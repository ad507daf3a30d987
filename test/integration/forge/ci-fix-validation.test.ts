// Fix validation of CI repair on real Git and a real database (issue 15 item 3; spec document 2: fix
// validation uses the remote PR head and effective PR diff as baseline, accepts only new in-scope
// changes, and never counts a main-branch sync as a fix): services/forge/fix-baseline.ts digests the
// effective diff, domain/forge/ci-repair.ts judgeCiFix compares two baselines. Also the CI log
// evidence rule (a log with only the forge's own notes is no evidence).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ciLogEvidence, judgeCiFix } from '../../../domain/forge/ci-repair.ts';
import type { ForgeRepository, PullRequest, Worktree } from '../../../domain/forge/types.ts';
import { fixBaseline } from '../../../services/forge/fix-baseline.ts';
import { gitIn, writeFiles } from '../../fixtures/git-repo.ts';
import { type ForgeFixture, startForge } from './support.ts';

let fx: ForgeFixture;
let repo: ForgeRepository;
let bareDir: string;

before(async () => {
  fx = await startForge({ ciTimeoutSeconds: 30 });
  const project = fx.project({
    'app.txt': 'broken\n',
    'lib.txt': 'lib\n',
    '.svc/ci': 'sh ci.sh\n',
    'ci.sh': 'exit 1\n',
  });
  repo = await fx.forge.ensureRepository({ id: 7, path: project.path });
  bareDir = path.join(fx.testDb.dataDir, 'forge', '7.git');
});
after(async () => {
  await fx.close();
});

/** A commit on main in the forge's repository (as another PR's merge would make it). */
function moveMain(files: Record<string, string>) {
  const side = fx.wtPath('main-side');
  gitIn(bareDir, 'worktree', 'add', '--quiet', side, 'main');
  writeFiles(side, files);
  gitIn(side, 'add', '-A');
  gitIn(side, 'commit', '--quiet', '-m', 'main moves');
  gitIn(bareDir, 'worktree', 'remove', '--force', side);
}

test('a main-branch sync moves the head but is never a fix; a new in-scope change is', async () => {
  const wt: Worktree = await fx.forge.createWorktree(repo, {
    branch: 'svc/wf-fix',
    baseSha: await fx.forge.baseline(repo),
    path: fx.wtPath('fix'),
  });
  writeFiles(wt.path, { 'app.txt': 'still broken\n' });
  await fx.forge.commitAll(wt, 'impl');
  let pr: PullRequest = await fx.forge.openPullRequest({ repo, head: wt.branch, base: 'main', title: 't' });
  const before = await fixBaseline(fx.forge, pr);

  // nothing happened: not a fix
  assert.deepEqual(judgeCiFix(before, await fixBaseline(fx.forge, pr)), {
    fixed: false,
    reason: 'the repair changed nothing: the PR head did not move',
  });

  // main moves (also touching a file next to the PR's) and the PR is synced: head and merge base move
  moveMain({ 'lib.txt': 'lib v2\n', 'other.txt': 'from main\n' });
  const synced = await fx.forge.syncWithBase(pr);
  assert.equal(synced.status, 'synced');
  pr = await fx.forge.getPullRequest(repo, pr.number);
  const afterSync = await fixBaseline(fx.forge, pr);
  assert.notEqual(afterSync.headSha, before.headSha, 'the head moved');
  assert.notEqual(afterSync.mergeBaseSha, before.mergeBaseSha, 'the merge base moved');
  const verdict = judgeCiFix(before, afterSync);
  assert.equal(verdict.fixed, false);
  assert.match(verdict.reason, /only by a main-branch sync.*not a fix/);

  // a commit that re-writes a file to what main already has is no in-scope change either
  writeFiles(wt.path, { 'other.txt': 'from main\n' });
  assert.equal(await fx.forge.commitAll(wt, 'nothing new'), null);

  // a real change of the PR's own files is a fix
  writeFiles(wt.path, { 'app.txt': 'fixed\n' });
  assert.ok(await fx.forge.commitAll(wt, 'repair'));
  pr = await fx.forge.getPullRequest(repo, pr.number);
  const afterFix = await fixBaseline(fx.forge, pr);
  assert.equal(judgeCiFix(afterSync, afterFix).fixed, true);
  assert.equal(judgeCiFix(before, afterFix).fixed, true);
});

test('CI log evidence: a log with only [svc] notes or nothing is not ready; any output is evidence', () => {
  assert.equal(ciLogEvidence(null), 'logs_not_ready');
  assert.equal(ciLogEvidence(''), 'logs_not_ready');
  assert.equal(ciLogEvidence('\n[svc] runtime: Node 20\n\n'), 'logs_not_ready');
  assert.equal(ciLogEvidence('[svc] note\nError: expected 1 got 2\n'), 'ok');
});
