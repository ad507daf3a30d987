// The spec's merge-stage decision order driven by real local-forge evidence (observeMerge ->
// decideMergeStep), as the workflow will run it: behind -> sync and wait for the new CI; failing CI ->
// repair with a fingerprint, the same failure again -> fail visibly; cancelled CI -> re-run and wait;
// a real conflict -> resolver; a refused merge re-queried; clean -> merge.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { PullRequestStateError } from '../../../domain/forge/errors.ts';
import { decideMergeStep } from '../../../domain/forge/merge-decision.ts';
import type { ForgeRepository, Worktree } from '../../../domain/forge/types.ts';
import { observeMerge, refusalOf } from '../../../services/forge/observe.ts';
import { gitIn, writeFiles } from '../../fixtures/git-repo.ts';
import { type ForgeFixture, startForge } from './support.ts';

let fx: ForgeFixture;
let repo: ForgeRepository;

before(async () => {
  fx = await startForge();
  const project = fx.project({
    '.svc/ci': 'sh ci.sh\n',
    'ci.sh':
      'if grep -qx ok status.txt; then echo pass; else echo "FAIL at $(date +%s%N) pid $$" >&2; exit 1; fi\n',
    'status.txt': 'ok\n',
    'shared.txt': 'a\nb\nc\n',
  });
  repo = await fx.forge.ensureRepository({ id: 3, path: project.path });
});
after(() => fx.close());
const bareDir = () => path.join(fx.testDb.dataDir, 'forge', '3.git');

async function branch(name: string, files: Record<string, string | null>): Promise<Worktree> {
  const wt = await fx.forge.createWorktree(repo, {
    branch: name,
    baseSha: await fx.forge.baseline(repo),
    path: fx.wtPath(name.replaceAll('/', '-')),
  });
  writeFiles(wt.path, files);
  assert.ok(await fx.forge.commitAll(wt, name));
  return wt;
}
const openPr = (wt: Worktree) =>
  fx.forge.openPullRequest({ repo, head: wt.branch, base: 'main', title: wt.branch, workflowId: wt.branch });

test('behind -> sync_and_wait; after the sync the new head waits for CI; then merge', async () => {
  const a = await branch('svc/wf-s1', { 's1.txt': '1\n' });
  const b = await branch('svc/wf-s2', { 's2.txt': '2\n' });
  const prA = await openPr(a);
  const prB = await openPr(b);
  await fx.forge.runCi(prA);
  assert.equal(decideMergeStep(await observeMerge(fx.forge, prA)).action, 'merge');
  assert.equal((await fx.forge.merge(prA, { method: 'merge' })).merged, true);

  await fx.forge.runCi(prB);
  const d1 = decideMergeStep(await observeMerge(fx.forge, prB));
  assert.deepEqual([d1.action, d1.rule, d1.consumesRepairAttempt], ['sync_and_wait', 1, false]);
  assert.equal((await fx.forge.syncWithBase(prB)).status, 'synced');
  const d2 = decideMergeStep(await observeMerge(fx.forge, prB));
  assert.deepEqual([d2.action, d2.pending], ['wait', ['ci']]);
  await fx.forge.runCi(prB);
  const d3 = decideMergeStep(await observeMerge(fx.forge, prB));
  assert.equal(d3.action, 'merge');
  assert.equal((await fx.forge.merge(prB, { method: 'ff' })).merged, true);
});

test('failing CI -> ci_repair with a stable fingerprint; the same failure after a repair -> fail_visible', async () => {
  const wt = await branch('svc/wf-red', { 'status.txt': 'no\n' });
  const pr = await openPr(wt);
  await fx.forge.runCi(pr);
  // a merge attempt is refused; the refusal is re-queried, and the failing check decides
  const refused = await fx.forge.merge(pr, { method: 'merge' });
  assert.equal(!refused.merged && refused.category, 'failing');
  const d1 = decideMergeStep(await observeMerge(fx.forge, pr, { refusal: refusalOf(refused) }));
  assert.deepEqual([d1.action, d1.rule, d1.consumesRepairAttempt], ['ci_repair', 3, true]);
  const fp = d1.failing![0]!.fingerprint!;
  assert.match(fp, /^ci:[0-9a-f]{16}$/);

  // a "repair" that does not fix it: new head, same failure (the log differs only in digits)
  writeFiles(wt.path, { 'unrelated.txt': 'x\n' });
  await fx.forge.commitAll(wt, 'not a fix');
  await fx.forge.runCi(pr);
  const d2 = decideMergeStep(
    await observeMerge(fx.forge, pr, { repairedFingerprints: [fp], repairAttempts: 1 }),
  );
  assert.equal(d2.action, 'fail_visible');
  assert.match(d2.reason, /same failure persists/);

  // a different failure is new evidence
  writeFiles(wt.path, { 'status.txt': null });
  await fx.forge.commitAll(wt, 'different failure');
  await fx.forge.runCi(pr);
  const d3 = decideMergeStep(
    await observeMerge(fx.forge, pr, { repairedFingerprints: [fp], repairAttempts: 1 }),
  );
  assert.equal(d3.action, 'ci_repair');
  assert.notEqual(d3.failing![0]!.fingerprint, fp);
  // attempts exhausted
  const d4 = decideMergeStep(
    await observeMerge(fx.forge, pr, { repairedFingerprints: [fp], repairAttempts: 5 }),
  );
  assert.equal(d4.action, 'fail_visible');
});

test('a cancelled CI run is re-run and waited for, never repaired', async () => {
  const wt = await branch('svc/wf-cancel', { 'ci.sh': 'sleep 30\n' });
  const pr = await openPr(wt);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 300);
  assert.equal((await fx.forge.runCi(pr, { signal: ac.signal })).status, 'cancelled');
  const d = decideMergeStep(await observeMerge(fx.forge, pr));
  assert.deepEqual([d.action, d.rerun, d.consumesRepairAttempt], ['wait', ['ci'], false]);
});

test('a real conflict -> resolve_conflict with the files, even when the merge refusal came first', async () => {
  const l = await branch('svc/wf-l', { 'shared.txt': 'a\nL\nc\n' });
  const r = await branch('svc/wf-r', { 'shared.txt': 'a\nR\nc\n' });
  const prL = await openPr(l);
  const prR = await openPr(r);
  await fx.forge.runCi(prL);
  await fx.forge.runCi(prR);
  assert.equal((await fx.forge.merge(prL, { method: 'merge' })).merged, true);
  const refused = await fx.forge.merge(prR, { method: 'merge' });
  assert.equal(!refused.merged && refused.category, 'conflict');
  const o = await observeMerge(fx.forge, prR, { refusal: refusalOf(refused) });
  assert.equal(o.behind, true);
  assert.equal(o.mergeableState, 'dirty');
  const d = decideMergeStep(o);
  assert.deepEqual([d.action, d.rule, d.conflictFiles], ['resolve_conflict', 4, ['shared.txt']]);

  // the resolver works in the PR's own worktree: refused while it holds uncommitted work or is not the PR's
  writeFiles(r.path, { 'scratch.txt': 'wip\n' });
  await assert.rejects(fx.forge.beginConflictResolution(r, prR), /uncommitted changes/);
  writeFiles(r.path, { 'scratch.txt': null });
  await assert.rejects(fx.forge.beginConflictResolution(l, prR), PullRequestStateError);
  const begun = await fx.forge.beginConflictResolution(r, prR);
  assert.deepEqual(begun, { status: 'conflict', files: ['shared.txt'] });
  assert.match(readFileSync(path.join(r.path, 'shared.txt'), 'utf8'), /^<<<<<<< /m);
  assert.equal(await fx.forge.mergeInProgress(r), true);
  await assert.rejects(fx.forge.commitAll(r, 'sneaky'), /merge of the base is in progress/);
  // markers left in place: refused, the merge stays in progress
  await assert.rejects(fx.forge.completeConflictResolution(r), /Conflict markers remain/);
  assert.equal(await fx.forge.mergeInProgress(r), true);
  // the "agent" resolves
  writeFiles(r.path, { 'shared.txt': 'a\nL+R\nc\n' });
  const resolved = await fx.forge.completeConflictResolution(r, 'Resolve conflict with main');
  const parents = gitIn(r.path, 'rev-list', '--parents', '-n', '1', 'HEAD').split(' ');
  assert.equal(parents.length, 3, 'a merge commit');
  assert.equal(parents[0], resolved.sha);
  assert.equal(await fx.forge.mergeInProgress(r), false);
  const fresh = await fx.forge.getPullRequest(repo, prR.number);
  assert.equal(fresh.headSha, resolved.sha);
  assert.equal((await fx.forge.isBehind(fresh)).behind, false);
  assert.equal((await fx.forge.mergeability(fresh)).state, 'blocked', 'new head: CI again');
  await fx.forge.runCi(fresh);
  assert.equal(decideMergeStep(await observeMerge(fx.forge, fresh)).action, 'merge');
  assert.equal((await fx.forge.merge(fresh, { method: 'ff' })).merged, true);
  assert.equal(gitIn(bareDir(), 'show', 'main:shared.txt'), 'a\nL+R\nc');
});

test('a conflict resolution can be abandoned; a clean base merge in the worktree is committed at once', async () => {
  const x = await branch('svc/wf-x', { 'shared.txt': 'X\n' });
  const y = await branch('svc/wf-y', { 'shared.txt': 'Y\n' });
  const prX = await openPr(x);
  const prY = await openPr(y);
  await fx.forge.runCi(prX);
  assert.equal((await fx.forge.merge(prX, { method: 'merge' })).merged, true);
  const headBefore = gitIn(y.path, 'rev-parse', 'HEAD');
  assert.equal((await fx.forge.beginConflictResolution(y, prY)).status, 'conflict');
  await fx.forge.abortConflictResolution(y);
  assert.equal(await fx.forge.mergeInProgress(y), false);
  assert.equal(gitIn(y.path, 'rev-parse', 'HEAD'), headBefore);
  assert.equal(readFileSync(path.join(y.path, 'shared.txt'), 'utf8'), 'Y\n');
  await assert.rejects(fx.forge.completeConflictResolution(y), /No merge is in progress/);
  await fx.forge.closePullRequest(prY);

  const z = await branch('svc/wf-z', { 'z.txt': 'z\n' });
  const w = await branch('svc/wf-w', { 'w.txt': 'w\n' });
  const prZ = await openPr(z);
  const prW = await openPr(w);
  await fx.forge.runCi(prZ);
  assert.equal((await fx.forge.merge(prZ, { method: 'merge' })).merged, true);
  const clean = await fx.forge.beginConflictResolution(w, prW);
  assert.equal(clean.status, 'synced');
  assert.equal((await fx.forge.getPullRequest(repo, prW.number)).headSha, gitIn(w.path, 'rev-parse', 'HEAD'));
  assert.equal(readFileSync(path.join(w.path, 'z.txt'), 'utf8'), 'z\n');
});
