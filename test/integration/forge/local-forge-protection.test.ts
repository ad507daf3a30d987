// Branch protection of the local forge (issue 15 item 1) on real Git and a real database (both
// dialects): the base branch declares `.svc/branch-protection.json`; a draft PR, missing approvals, a
// required check the repository does not declare and an invalid protection file are refused with
// category `rule` and a reason naming the requirement (mergeability `blocked`), and the merge-stage
// decision pauses on them (rule 5); meeting the requirement (un-draft, approve) lets the merge through.
// A head cannot weaken the rule it is judged by; stale approvals are dismissed when the file says so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PullRequestStateError } from '../../../domain/forge/errors.ts';
import { decideMergeStep } from '../../../domain/forge/merge-decision.ts';
import type { ForgeRepository, PullRequest, Worktree } from '../../../domain/forge/types.ts';
import { observeMerge, refusalOf } from '../../../services/forge/observe.ts';
import { gitIn, writeFiles } from '../../fixtures/git-repo.ts';
import { type ForgeFixture, startForge } from './support.ts';

let fx: ForgeFixture;
let nextId = 100;

before(async () => {
  fx = await startForge({ ciTimeoutSeconds: 30 });
});
after(async () => {
  await fx.close();
});

async function repoWith(files: Record<string, string>): Promise<ForgeRepository> {
  const project = fx.project({ 'app.txt': 'one\n', ...files });
  return fx.forge.ensureRepository({ id: nextId++, path: project.path });
}

async function branchWith(
  repo: ForgeRepository,
  name: string,
  files: Record<string, string | null>,
): Promise<Worktree> {
  const wt = await fx.forge.createWorktree(repo, {
    branch: name,
    baseSha: await fx.forge.baseline(repo),
    path: fx.wtPath(name.replaceAll('/', '-')),
  });
  writeFiles(wt.path, files);
  assert.ok(await fx.forge.commitAll(wt, `change on ${name}`));
  return wt;
}

const CI = { '.svc/ci': 'sh ci.sh\n', 'ci.sh': 'echo ok\n' };
const protection = (rules: unknown) => ({ '.svc/branch-protection.json': JSON.stringify(rules) });

async function refusalAndDecision(pr: PullRequest) {
  const r = await fx.forge.merge(pr, { method: 'merge' });
  assert.equal(r.merged, false, 'the merge is refused');
  const obs = await observeMerge(fx.forge, pr, { refusal: refusalOf(r) });
  return { r: r as Extract<typeof r, { merged: false }>, decision: decideMergeStep(obs) };
}

describe('local forge branch protection', () => {
  test('a draft PR is refused as a rule (even with no protection file) until it is marked ready', async () => {
    const repo = await repoWith(CI);
    const wt = await branchWith(repo, 'svc/draft', { 'app.txt': 'two\n' });
    let pr = await fx.forge.openPullRequest({
      repo,
      head: wt.branch,
      base: repo.defaultBranch,
      title: 't',
      draft: true,
    });
    assert.equal(pr.draft, true);
    assert.equal((await fx.forge.runCi(pr)).status, 'passed');
    const m = await fx.forge.mergeability(pr);
    assert.equal(m.state, 'blocked');
    assert.match(m.reason, /draft/);
    const { r, decision } = await refusalAndDecision(pr);
    assert.equal(r.category, 'rule');
    assert.match(r.reason, /draft: the pull request is a draft/);
    assert.equal(decision.action, 'pause_for_rules');
    assert.equal(decision.rule, 5);
    assert.match(decision.reason, /draft/);

    pr = await fx.forge.setDraft(pr, false);
    assert.equal(pr.draft, false);
    assert.equal((await fx.forge.mergeability(pr)).state, 'clean');
    const merged = await fx.forge.merge(pr, { method: 'merge' });
    assert.equal(merged.merged, true);
    // a merged PR cannot be made a draft again, nor reviewed
    await assert.rejects(fx.forge.setDraft(pr, true), PullRequestStateError);
    await assert.rejects(
      fx.forge.reviewPullRequest(pr, { reviewer: 'r', state: 'approved' }),
      PullRequestStateError,
    );
  });

  test('required review: refused naming the requirement; changes requested does not count; approved merges', async () => {
    const repo = await repoWith({ ...CI, ...protection({ required_approvals: 1, required_checks: ['ci'] }) });
    // The head tries to weaken the rule it is judged by: the base's file decides.
    const wt = await branchWith(repo, 'svc/review', {
      'app.txt': 'two\n',
      ...protection({ required_approvals: 0 }),
    });
    const pr = await fx.forge.openPullRequest({
      repo,
      head: wt.branch,
      base: repo.defaultBranch,
      title: 't',
    });
    // Before CI passed the failing/pending evidence comes first (not a rule refusal).
    const early = await fx.forge.merge(pr, { method: 'merge' });
    assert.equal(!early.merged && early.category, 'pending');
    assert.equal((await fx.forge.runCi(pr)).status, 'passed');

    let { r, decision } = await refusalAndDecision(pr);
    assert.equal(r.category, 'rule');
    assert.equal(r.reason, 'required review: 1 approval(s) required, 0 given');
    assert.equal(r.mergeability?.state, 'blocked');
    assert.equal(decision.action, 'pause_for_rules');

    await fx.forge.reviewPullRequest(pr, { reviewer: 'alice', state: 'changes_requested' });
    ({ r } = await refusalAndDecision(pr));
    assert.match(r.reason, /0 given/);
    // approving, then requesting changes again by the same reviewer replaces the approval
    await fx.forge.reviewPullRequest(pr, { reviewer: 'alice', state: 'approved' });
    await fx.forge.reviewPullRequest(pr, { reviewer: 'alice', state: 'changes_requested' });
    ({ r } = await refusalAndDecision(pr));
    assert.match(r.reason, /0 given/);
    await assert.rejects(
      fx.forge.reviewPullRequest(pr, { reviewer: '  ', state: 'approved' }),
      PullRequestStateError,
    );
    await assert.rejects(
      fx.forge.reviewPullRequest(pr, { reviewer: 'bob', state: 'lgtm' as 'approved' }),
      PullRequestStateError,
    );

    await fx.forge.reviewPullRequest(pr, { reviewer: 'alice', state: 'approved' });
    const obs = await observeMerge(fx.forge, pr);
    assert.equal(decideMergeStep(obs).action, 'merge');
    const merged = await fx.forge.merge(pr, { method: 'merge' });
    assert.equal(merged.merged, true);
    assert.equal(gitIn(fx.testDb.dataDir + `/forge/${nextId - 1}.git`, 'show', 'main:app.txt'), 'two');
  });

  test('dismiss_stale_approvals: an approval of an older head no longer counts', async () => {
    const repo = await repoWith({
      ...CI,
      ...protection({ required_approvals: 1, dismiss_stale_approvals: true }),
    });
    const wt = await branchWith(repo, 'svc/stale', { 'app.txt': 'two\n' });
    let pr = await fx.forge.openPullRequest({ repo, head: wt.branch, base: repo.defaultBranch, title: 't' });
    await fx.forge.reviewPullRequest(pr, { reviewer: 'alice', state: 'approved' });
    writeFiles(wt.path, { 'app.txt': 'three\n' });
    await fx.forge.commitAll(wt, 'more');
    pr = await fx.forge.getPullRequest(repo, pr.number);
    assert.equal((await fx.forge.runCi(pr)).status, 'passed');
    const { r } = await refusalAndDecision(pr);
    assert.equal(r.reason, 'required review: 1 approval(s) required, 0 given for the current head');
    await fx.forge.reviewPullRequest(pr, { reviewer: 'alice', state: 'approved' });
    assert.equal((await fx.forge.merge(pr, { method: 'merge' })).merged, true);
  });

  test('a required check the repository does not declare blocks the merge as a rule', async () => {
    const repo = await repoWith(protection({ required_checks: ['ci'] }));
    const wt = await branchWith(repo, 'svc/nocheck', { 'app.txt': 'two\n' });
    const pr = await fx.forge.openPullRequest({
      repo,
      head: wt.branch,
      base: repo.defaultBranch,
      title: 't',
    });
    assert.equal((await fx.forge.runCi(pr)).status, 'no_ci');
    const { r, decision } = await refusalAndDecision(pr);
    assert.equal(r.category, 'rule');
    assert.match(r.reason, /required check ci is missing/);
    assert.equal(decision.action, 'pause_for_rules');
  });

  for (const [label, content, reason] of [
    ['not JSON', '{nope', /is invalid: not valid JSON/],
    ['an unknown key', JSON.stringify({ required_aprovals: 1 }), /is invalid: the file: .*required_aprovals/],
    ['a wrong type', JSON.stringify({ required_approvals: 'one' }), /is invalid: required_approvals/],
    ['too many approvals', JSON.stringify({ required_approvals: 11 }), /is invalid: required_approvals/],
    [
      'an unknown check',
      JSON.stringify({ required_checks: ['lint'] }),
      /names lint; this forge reports only ci/,
    ],
  ] as const)
    test(`a protection file with ${label} is refused clearly (fail closed)`, async () => {
      const repo = await repoWith({ ...CI, '.svc/branch-protection.json': content });
      const wt = await branchWith(repo, `svc/bad-${nextId}`, { 'app.txt': 'two\n' });
      const pr = await fx.forge.openPullRequest({
        repo,
        head: wt.branch,
        base: repo.defaultBranch,
        title: 't',
      });
      assert.equal((await fx.forge.runCi(pr)).status, 'passed');
      const { r, decision } = await refusalAndDecision(pr);
      assert.equal(r.category, 'rule');
      assert.match(r.reason, /^branch protection: \.svc\/branch-protection\.json /);
      assert.match(r.reason, reason);
      assert.equal(decision.action, 'pause_for_rules');
    });
});
