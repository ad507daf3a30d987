// The spec's merge-stage decision order (domain/forge/merge-decision.ts) driven by GitHub evidence:
// the GitHub forge against the GitHub fake, row by row, as the workflow runs it (observeMerge ->
// decideMergeStep -> act): behind -> sync and wait; a refusal -> re-query; failing -> CI repair with
// a fingerprint, the same fingerprint again -> fail visibly; pending -> wait; cancelled -> re-run;
// dirty -> conflict resolver in the PR's worktree; review required / draft / protection -> paused,
// then merged once met; 403 -> fails visibly with GitHub's reason; unreadable logs -> the insufficient
// CI evidence class.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, test } from 'node:test';
import { behaviourOf } from '../../../domain/autonomous/errors.ts';
import { classifyForgeError } from '../../../domain/forge/error-class.ts';
import { CiEvidenceInsufficientError, ForgeTransientError } from '../../../domain/forge/errors.ts';
import { decideMergeStep } from '../../../domain/forge/merge-decision.ts';
import type { MergeResult, PullRequest } from '../../../domain/forge/types.ts';
import { observeMerge, refusalOf } from '../../../services/forge/observe.ts';
import { gitIn, writeFiles } from '../../fixtures/git-repo.ts';
import { type GitHubFixture, startGitHubForge, statusFileRule } from './github-support.ts';

let fx: GitHubFixture | undefined;
afterEach(async () => {
  // every call the adapter made is one the fake covers (no silent 404 for an unknown route)
  assert.deepEqual(fx?.fake.unrouted ?? [], []);
  await fx?.close();
  fx = undefined;
});

async function start() {
  fx = await startGitHubForge({ 'status.txt': 'ok\n', 'shared.txt': 'a\nb\nc\n' });
  fx.fake.ciRule(statusFileRule());
  return fx;
}

const decide = async (f: GitHubFixture, pr: PullRequest, ctx = {}) =>
  decideMergeStep(await observeMerge(f.forge, await f.forge.getPullRequest(f.repo, pr.number), ctx));

function refused(r: MergeResult) {
  assert.equal(r.merged, false);
  return r as Extract<MergeResult, { merged: false }>;
}

test('behind main -> sync_and_wait (no repair attempt); the synced head waits for CI; then merge', async () => {
  const f = await start();
  const wt = await f.branch('svc/wf-behind', { 'mine.txt': '1\n' });
  const pr = await f.openPr(wt);
  await f.forge.runCi(pr);
  f.fake.commitTo(f.repoKey, 'main', { 'theirs.txt': '2\n' }, 'someone else merged');
  const d1 = await decide(f, pr);
  assert.deepEqual([d1.action, d1.rule, d1.consumesRepairAttempt], ['sync_and_wait', 1, false]);
  f.fake.holdChecks(true);
  const synced = await f.forge.syncWithBase(pr);
  assert.equal(synced.status, 'synced');
  // the PR's own worktree followed, and GitHub has the merge of main
  assert.equal(gitIn(wt.path, 'rev-parse', 'HEAD'), f.fake.branchSha(f.repoKey, wt.branch));
  assert.equal(readFileSync(path.join(wt.path, 'theirs.txt'), 'utf8'), '2\n');
  const d2 = await decide(f, pr);
  assert.deepEqual([d2.action, d2.rule, d2.pending], ['wait', 3, ['ci']]);
  f.fake.releaseChecks();
  const d3 = await decide(f, pr);
  assert.equal(d3.action, 'merge');
  assert.ok(
    (await f.forge.merge(await f.forge.getPullRequest(f.repo, pr.number), { method: 'merge' })).merged,
  );
});

test('failing -> refused merge is re-queried -> ci_repair with a fingerprint; same fingerprint -> fail_visible', async () => {
  const f = await start();
  f.fake.protect(f.repoKey, { requiredChecks: ['ci'] });
  const wt = await f.branch('svc/wf-red', { 'status.txt': 'broken\n' });
  const pr = await f.openPr(wt);
  await f.forge.runCi(pr);
  const r = refused(await f.forge.merge(pr, { method: 'merge' }));
  assert.equal(r.category, 'failing');
  assert.match(r.reason, /Required status check "ci" is failing/);
  const requery = decideMergeStep({
    ...(await observeMerge(f.forge, pr, { refusal: refusalOf(r) })),
    requeriedAfterRefusal: false,
  });
  assert.deepEqual([requery.action, requery.rule], ['requery', 2]);
  const d1 = await decide(f, pr, { refusal: refusalOf(r) });
  assert.deepEqual([d1.action, d1.rule, d1.consumesRepairAttempt], ['ci_repair', 3, true]);
  const fp = d1.failing![0]!.fingerprint!;
  assert.match(fp, /^ci:[0-9a-f]{16}$/);
  // the repair evidence: the failed job's log
  const latest = await f.forge.latestCi(pr);
  assert.match(latest!.logTail!, /expected ok/);
  // a "repair" that changes something else: the same failure -> fail visibly
  writeFiles(wt.path, { 'unrelated.txt': 'x\n' });
  await f.forge.commitAll(wt, 'not a fix');
  await f.forge.push(wt);
  await f.forge.runCi(await f.forge.getPullRequest(f.repo, pr.number));
  const d2 = await decide(f, pr, { repairedFingerprints: [fp], repairAttempts: 1 });
  assert.deepEqual([d2.action, d2.rule], ['fail_visible', 3]);
  assert.match(d2.reason, /same failure persists/);
  // a real fix: merges
  writeFiles(wt.path, { 'status.txt': 'ok\n' });
  await f.forge.commitAll(wt, 'fix');
  await f.forge.push(wt);
  await f.forge.runCi(await f.forge.getPullRequest(f.repo, pr.number));
  assert.equal((await decide(f, pr, { repairedFingerprints: [fp], repairAttempts: 1 })).action, 'merge');
  assert.ok(
    (await f.forge.merge(await f.forge.getPullRequest(f.repo, pr.number), { method: 'merge' })).merged,
  );
});

test('pending -> wait; cancelled -> wait with a re-run (never a repair); runCi re-requests it', async () => {
  const f = await start();
  f.fake.holdChecks(true);
  const wt = await f.branch('svc/wf-pending', { 'p.txt': 'p\n' });
  const pr = await f.openPr(wt);
  const d1 = await decide(f, pr);
  assert.deepEqual([d1.action, d1.pending, d1.consumesRepairAttempt], ['wait', ['ci'], false]);
  const ci = await f.forge.runCi(pr, { timeoutSeconds: 0.2 });
  assert.equal(ci.status, 'running', 'the wait is bounded');
  f.fake.holdChecks(false);
  f.fake.cancelCheck(f.repoKey, pr.headSha, 'ci');
  const d2 = await decide(f, pr);
  assert.deepEqual([d2.action, d2.rerun, d2.consumesRepairAttempt], ['wait', ['ci'], false]);
  const rerun = await f.forge.runCi(pr);
  assert.equal(rerun.status, 'passed');
  assert.ok(f.fake.requests.some((r) => r.method === 'POST' && r.path.endsWith('/rerequest')));
  assert.equal((await decide(f, pr)).action, 'merge');
});

test('dirty -> resolve_conflict in the PR worktree; resolved, pushed, CI, merged', async () => {
  const f = await start();
  const wt = await f.branch('svc/wf-conflict', { 'shared.txt': 'a\nMINE\nc\n' });
  const pr = await f.openPr(wt);
  await f.forge.runCi(pr);
  f.fake.commitTo(f.repoKey, 'main', { 'shared.txt': 'a\nTHEIRS\nc\n' }, 'conflicting push to main');
  const r = refused(
    await f.forge.merge(await f.forge.getPullRequest(f.repo, pr.number), { method: 'merge' }),
  );
  assert.equal(r.category, 'conflict');
  const o = await observeMerge(f.forge, pr, { refusal: refusalOf(r) });
  assert.equal(o.behind, true);
  assert.equal(o.mergeableState, 'dirty');
  const d = decideMergeStep(o);
  assert.deepEqual([d.action, d.rule, d.conflictFiles], ['resolve_conflict', 4, ['shared.txt']]);
  // a plain sync cannot do it (and changes nothing)
  const before = f.fake.branchSha(f.repoKey, wt.branch);
  assert.deepEqual(await f.forge.syncWithBase(pr), { status: 'conflict', files: ['shared.txt'] });
  assert.equal(f.fake.branchSha(f.repoKey, wt.branch), before);
  // the resolver, in the worktree bound to the PR branch
  const begun = await f.forge.beginConflictResolution(wt, pr);
  assert.deepEqual(begun, { status: 'conflict', files: ['shared.txt'] });
  await assert.rejects(f.forge.completeConflictResolution(wt), /Conflict markers remain/);
  writeFiles(wt.path, { 'shared.txt': 'a\nMINE+THEIRS\nc\n' });
  const resolved = await f.forge.completeConflictResolution(wt, 'Resolve conflict with main');
  assert.equal(f.fake.branchSha(f.repoKey, wt.branch), resolved.sha, 'pushed');
  const fresh = await f.forge.getPullRequest(f.repo, pr.number);
  await f.forge.runCi(fresh);
  assert.equal((await decide(f, pr)).action, 'merge');
  assert.ok((await f.forge.merge(fresh, { method: 'merge' })).merged);
  assert.equal(f.fake.fileAt(f.repoKey, 'main', 'shared.txt'), 'a\nMINE+THEIRS\nc');
});

test('review required -> pause_for_rules; approved -> merge', async () => {
  const f = await start();
  f.fake.protect(f.repoKey, { requiredReviews: 1 });
  const wt = await f.branch('svc/wf-review', { 'r.txt': 'r\n' });
  const pr = await f.openPr(wt);
  await f.forge.runCi(pr);
  assert.equal((await decide(f, pr)).action, 'merge', 'blocked is diagnostic: try');
  const r = refused(await f.forge.merge(pr, { method: 'merge' }));
  assert.equal(r.category, 'rule');
  assert.match(r.reason, /approving review is required/);
  const d = await decide(f, pr, { refusal: refusalOf(r) });
  assert.deepEqual([d.action, d.rule], ['pause_for_rules', 5]);
  f.fake.approve(f.repoKey, pr.number);
  assert.equal((await decide(f, pr)).action, 'merge');
  assert.ok((await f.forge.merge(pr, { method: 'merge' })).merged);
});

test('draft -> pause_for_rules; marked ready -> merge', async () => {
  const f = await start();
  const wt = await f.branch('svc/wf-draft', { 'd.txt': 'd\n' });
  const pr = await f.openPr(wt, { draft: true });
  await f.forge.runCi(pr);
  const r = refused(await f.forge.merge(pr, { method: 'merge' }));
  assert.equal(r.category, 'rule');
  const d = await decide(f, pr, { refusal: refusalOf(r) });
  assert.deepEqual([d.action, d.rule], ['pause_for_rules', 5]);
  f.fake.setDraft(f.repoKey, pr.number, false);
  assert.ok((await f.forge.merge(pr, { method: 'merge' })).merged);
});

test('branch protection (a required check never reported) -> pause_for_rules; reported -> merge', async () => {
  const f = await start();
  f.fake.protect(f.repoKey, { requiredChecks: ['ci', 'security-scan'] });
  const wt = await f.branch('svc/wf-protect', { 'x.txt': 'x\n' });
  const pr = await f.openPr(wt);
  await f.forge.runCi(pr);
  const r = refused(await f.forge.merge(pr, { method: 'merge' }));
  assert.equal(r.category, 'rule');
  assert.match(r.reason, /Required status check "security-scan" is expected/);
  const d = await decide(f, pr, { refusal: refusalOf(r) });
  assert.deepEqual([d.action, d.rule], ['pause_for_rules', 5]);
  f.fake.setStatus(f.repoKey, pr.headSha, 'security-scan', 'success', 'no findings');
  const d2 = await decide(f, pr);
  assert.equal(d2.action, 'merge');
  assert.ok((await f.forge.merge(pr, { method: 'merge' })).merged);
});

test('403 on merge -> fail_visible with GitHub reason; 403 on logs -> insufficient CI evidence', async () => {
  const f = await start();
  const wt = await f.branch('svc/wf-denied', { 'z.txt': 'z\n' });
  const pr = await f.openPr(wt);
  await f.forge.runCi(pr);
  f.fake.mergeForbidden(true);
  const r = refused(await f.forge.merge(pr, { method: 'merge' }));
  assert.equal(r.category, 'error');
  const d = await decide(f, pr, { refusal: refusalOf(r) });
  assert.deepEqual([d.action, d.rule], ['fail_visible', 6]);
  assert.match(d.reason, /GitHub 403: Resource not accessible by integration/);
  assert.ok(!d.reason.includes(f.fake.token));
  f.fake.mergeForbidden(false);
  // a 5xx is not a refusal: it is thrown as a transient API error (backoff), and nothing merged
  f.fake.failNext(502, 3);
  const transient = await f.forge.merge(pr, { method: 'merge' }).catch((e) => e);
  assert.ok(transient instanceof ForgeTransientError, String(transient));
  assert.deepEqual(classifyForgeError(transient), {
    kind: 'class',
    error: { class: 'transient_api', httpStatus: 502 },
  });
  assert.equal(f.fake.pull(f.repoKey, pr.number)!.state, 'open');
  f.fake.failNext(502, 0);

  const red = await f.branch('svc/wf-nolog', { 'status.txt': 'bad\n' });
  const redPr = await f.openPr(red);
  await f.forge.runCi(redPr);
  f.fake.logsForbidden(true);
  const err = await observeMerge(f.forge, redPr).catch((e) => e);
  assert.ok(err instanceof CiEvidenceInsufficientError);
  const cls = classifyForgeError(err);
  assert.ok(cls?.kind === 'class');
  assert.deepEqual(behaviourOf(cls.error), { action: 'wait_for_diagnosis', maxPolls: 6, atLimit: 'fail' });
});
