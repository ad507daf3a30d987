// An autonomous workflow end to end against the GitHub fake (issue 15 "Done when", GitHub side): a
// project whose origin is a GitHub repository (and its tenant's GitHub token set through PUT
// /api/tenants/:id/autonomous; no global SVC_GITHUB_TOKEN) gets the GitHub forge; the
// workflow clones it, pushes its branch, opens the PR on GitHub, waits for GitHub's check runs, meets a
// conflicting push to main (resolved by the conflict-repair step in the PR's worktree and pushed), is
// paused by branch protection (one approving review required), and once the review is given on
// GitHub a resume merges it there; the acceptance check confirms it. A second workflow works on an
// issue of the GitHub repository: its red CI is repaired twice (GitHub's job logs are the evidence),
// it merges, and the confirmed acceptance check closes the issue on GitHub with a comment.
// Real Temporal worker, real database (SQLite, or PostgreSQL with DATABASE_URL), real git over HTTP.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Actor, resumeUpdate, temporalWorkflowId } from '../../../workflows/autonomous/contract.ts';
import { type GitHubFake, startGitHubFake } from '../../fixtures/github-fake/server.ts';
import { ADMIN } from '../../support/harness.ts';
import { api, login } from '../../support/session.ts';
import { startWorkflowWorld, stepScript, type WorkflowWorld } from '../autonomous/workflow-support.ts';

let fake: GitHubFake;
let world: WorkflowWorld;
const actor: Actor = { userId: 0, username: 'maintainer' };

before(async () => {
  fake = await startGitHubFake();
  world = await startWorkflowWorld({
    env: {
      SVC_GITHUB_API_URL: fake.apiUrl,
      SVC_GITHUB_WEB_URL: fake.webUrl,
      SVC_EGRESS__ALLOW_HOSTS: '127.0.0.1,localhost',
      SVC_AUTONOMOUS__CI_LOG_POLL_SECONDS: '1',
    },
  });
  actor.userId = world.userId;
  // The tenant's own token (issue 25 item 2): the only token its workflows use.
  const admin = await login(world.app.url, ADMIN.username, ADMIN.password);
  const put = await api(world.app.url, 'PUT', `/api/tenants/${world.tenantId}/autonomous`, {
    auth: admin,
    body: { github_token: fake.token },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
});
after(async () => {
  await world?.close();
  await fake?.close();
});

/** Puts the project's committed files in a new repository on the fake and makes it the origin. */
function mirrorToGitHub(projectPath: string, name: string): string {
  const files: Record<string, string> = {};
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: projectPath, encoding: 'utf8' });
  for (const f of listed.split('\0').filter(Boolean))
    files[f] = readFileSync(path.join(projectPath, f), 'utf8');
  const url = fake.createRepo('acme', name, files);
  execFileSync('git', ['remote', 'add', 'origin', url], { cwd: projectPath });
  return `acme/${name}`;
}

test('GitHub: conflict resolved, branch-protection pause resumed after approval, merged on GitHub', async () => {
  const project = world.project(
    stepScript({
      implementation: {
        steps: [
          { call: 1 },
          { write: { path: 'app.txt', content: 'fixed\n' } },
          { write: { path: 'notes.txt', content: 'mine\n' } },
          { text: 'implemented' },
        ],
      },
      conflict_repair: {
        steps: [
          { call: 1 },
          { write: { path: 'notes.txt', content: 'mine and theirs\n' } },
          { text: 'resolved' },
        ],
      },
    }),
    { 'notes.txt': 'original\n' },
  );
  const repoKey = mirrorToGitHub(project, 'e2e');
  let conflicted = false;
  fake.ciRule(({ branch, file }) => {
    // The first push of the workflow's branch: someone else changes the same line on main.
    if (!conflicted && branch.startsWith('svc/wf-')) {
      conflicted = true;
      fake.commitTo(repoKey, 'main', { 'notes.txt': 'theirs\n' }, 'a conflicting change on main');
    }
    return [
      file('app.txt')?.includes('fixed')
        ? { name: 'ci', conclusion: 'success', log: 'ok\n' }
        : { name: 'ci', conclusion: 'failure', log: `app.txt is not fixed: ${file('app.txt')}\n` },
    ];
  });
  fake.protect(repoKey, { requiredChecks: ['ci'], requiredReviews: 1 });

  const [wf] = await world.create(project);
  const id = wf!.workflowId;
  await world.start(id);
  let row = await world.waitFor(
    id,
    (r) => ['paused', 'failed', 'completed'].includes(r.status),
    'a pause',
    180_000,
  );
  assert.equal(row.status, 'paused', `error: ${row.error}`);
  assert.equal(row.pausedBy, 'repository_rules');
  assert.match(row.error ?? '', /approving review is required/);
  assert.equal(conflicted, true);
  const pr = fake.pull(repoKey, row.prNumber!)!;
  assert.equal(pr.state, 'open');
  assert.equal(fake.fileAt(repoKey, pr.head, 'notes.txt'), 'mine and theirs', 'the resolution is on GitHub');
  assert.equal(fake.fileAt(repoKey, 'main', 'app.txt'), 'broken', 'nothing merged yet');
  const kinds = (await world.milestones(id)).map((m) => m.kind);
  assert.ok(!kinds.includes('merge'), kinds.join(' '));

  fake.approve(repoKey, row.prNumber!, 'maintainer');
  const client = await world.app.deps.temporal.client();
  await client.workflow.getHandle(temporalWorkflowId(id)).executeUpdate(resumeUpdate, { args: [{ actor }] });
  row = await world.waitFor(
    id,
    (r) => ['completed', 'failed', 'paused'].includes(r.status) && r.status !== 'paused',
    'the end',
    180_000,
  );
  assert.equal(row.status, 'completed', `error: ${row.error}`);
  assert.equal(fake.pull(repoKey, row.prNumber!)!.mergedAt !== null, true, 'merged on GitHub');
  assert.equal(fake.fileAt(repoKey, 'main', 'app.txt'), 'fixed');
  assert.equal(fake.fileAt(repoKey, 'main', 'notes.txt'), 'mine and theirs');
  assert.equal(fake.logStoreSawAuth, 0);
  assert.deepEqual(fake.unrouted, []);
  // nothing of the token in the workflow's history
  const history = await client.workflow.getHandle(temporalWorkflowId(id)).fetchHistory();
  assert.ok(!JSON.stringify(history).includes(fake.token), 'token in workflow history');
});

test('GitHub: an issue requirement, red CI repaired twice from the job logs, merged, issue closed', async () => {
  const project = world.project(
    stepScript({
      implementation: {
        steps: [{ call: 1 }, { write: { path: 'app.txt', content: 'start\n' } }, { text: 'implemented' }],
      },
      ci_diagnosis: {
        steps: [{ call: 1 }, { append: { path: 'app.txt', content: 'fix\n' } }, { text: 'appended a fix' }],
      },
    }),
  );
  const repoKey = mirrorToGitHub(project, 'e2e-issue');
  const issue = fake.createIssue(repoKey, 'Make app.txt say fixed', 'app.txt must carry two fixes.');
  // CI passes once app.txt has two "fix" lines; the job log shows the file (a new signature each time).
  fake.ciRule(({ file }) => {
    const app = file('app.txt') ?? '';
    const fixes = app.split('\n').filter((l) => l === 'fix').length;
    return [
      fixes >= 2
        ? { name: 'ci', conclusion: 'success', log: 'ok\n' }
        : { name: 'ci', conclusion: 'failure', log: `app.txt has too few fixes:\n${app}` },
    ];
  });
  const [wf] = await world.create(project, { requirement: `#${issue}` });
  const id = wf!.workflowId;
  await world.start(id);
  const row = await world.waitFor(
    id,
    (r) => ['paused', 'failed', 'completed'].includes(r.status),
    'the end',
    180_000,
  );
  assert.equal(row.status, 'completed', `error: ${row.error}`);
  assert.equal(row.ciRepairAttempts, 2);
  const repairs = (await world.milestones(id)).filter((m) => m.kind === 'ci_diagnosis');
  assert.deepEqual(
    repairs.map((m) => m.title),
    ['CI repair 1', 'CI repair 2'],
  );
  assert.equal(fake.fileAt(repoKey, 'main', 'app.txt'), 'start\nfix\nfix');
  assert.ok(
    fake.requests.some((r) => r.path.startsWith('/_logs/')),
    'the job logs were read',
  );
  assert.equal(fake.logStoreSawAuth, 0);
  // the issue is closed as the completion's effect (right after the status is written)
  for (let i = 0; i < 100 && fake.issue(repoKey, issue)!.state !== 'closed'; i++) await sleep(100);
  const closed = fake.issue(repoKey, issue)!;
  assert.equal(
    closed.state,
    'closed',
    `row error ${(await world.row(id)).error}; issue calls ${JSON.stringify(fake.requests.filter((r) => r.path.includes('/issues/')))}`,
  );
  assert.equal(closed.comments.length, 1);
  assert.match(closed.comments[0]!.body ?? '', /acceptance verification confirmed/);
  assert.deepEqual(fake.unrouted, []);
});
