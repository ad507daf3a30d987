// The orchestrator's commit guards end to end (issue 15 item 3; spec document 2 "Limits": 60 changed
// files per automatic change, 3 pre-commit convergence passes): a change of more than
// AUTONOMOUS_MAX_CHANGED_FILES files is refused with a `too_many_changed_files` milestone naming the
// count and the limit, and nothing is committed; the repository's declared pre-commit hook
// (`.svc/pre-commit` at the baseline) runs before each commit until it changes nothing: a formatter
// converges and its changes are committed (an agent cannot swap the hook), a hook that keeps changing
// files fails after 3 passes, a failing hook fails the step with its output; each visibly.
// Real Temporal worker, real database (SQLite, or PostgreSQL with DATABASE_URL), real git, fake CLI.
// store-independent: the workflow's commit guards; the rows its activities write are covered on both
//   stores by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Script, startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;

before(async () => {
  world = await startWorkflowWorld();
});
after(async () => {
  await world?.close();
});

async function run(script: Script, files: Record<string, string> = {}) {
  const [wf] = await world.create(world.project(stepScript(script), files));
  await world.start(wf!.workflowId);
  const row = await world.waitFor(
    wf!.workflowId,
    (r) => ['completed', 'failed', 'paused'].includes(r.status),
    'an end',
    120_000,
  );
  return { row, ms: await world.milestones(wf!.workflowId) };
}

const branchTip = (projectId: number, branch: string) =>
  execFileSync('git', [
    '--git-dir',
    path.join(world.app.settings.dataDir, 'forge', `${projectId}.git`),
    'rev-parse',
    branch,
  ])
    .toString()
    .trim();

describe('changed-files limit', () => {
  test('61 changed files: refused with a too_many_changed_files milestone, nothing committed', async () => {
    const writes = Array.from({ length: 61 }, (_, i) => ({
      write: { path: `gen/f${i}.txt`, content: `${i}\n` },
    }));
    const { row, ms } = await run({
      implementation: { steps: [{ call: 1 }, ...writes, { text: 'generated 61 files' }] },
    });
    assert.equal(row.status, 'failed');
    assert.equal(row.currentPhase, 'development');
    const expected =
      'too_many_changed_files: The change touches 61 files; an automatic change may touch at most 60 (AUTONOMOUS_MAX_CHANGED_FILES)';
    assert.equal(row.error, expected);
    const impl = ms.find((m) => m.kind === 'implementation')!;
    assert.equal(impl.status, 'failed');
    assert.equal(impl.error, expected);
    assert.equal(impl.commitSha, null);
    assert.equal(branchTip(row.projectId!, row.branch!), row.baselineSha, 'nothing committed on the branch');
    assert.equal(row.prNumber, null, 'no pull request');
    // the worktree's index was reset: the files are there, unstaged
    const staged = execFileSync('git', ['diff', '--cached', '--name-only'], {
      cwd: row.preferredWorktreePath!,
    })
      .toString()
      .trim();
    assert.equal(staged, '');
  });
});

describe('pre-commit convergence', () => {
  const hook = (script: string) => ({ '.svc/pre-commit': 'sh hook.sh\n', 'hook.sh': script });

  test('a formatter converges (pass 2 changes nothing) and its changes are committed; the agent cannot swap the hook', async () => {
    const { row, ms } = await run(
      {
        implementation: {
          steps: [
            { call: 1 },
            { write: { path: 'app.txt', content: 'fixed\n' } },
            // the agent tries to replace the hook with one that fails: the baseline's hook runs
            { write: { path: '.svc/pre-commit', content: 'sh evil.sh\n' } },
            { write: { path: 'evil.sh', content: 'exit 9\n' } },
            { text: 'implemented' },
          ],
        },
      },
      {
        ...hook('tr a-z A-Z < app.txt > app.tmp && mv app.tmp app.txt\n'),
        'ci.sh': 'grep -qi fixed app.txt || { echo "app.txt is not fixed"; exit 1; }\n',
      },
    );
    assert.equal(row.status, 'completed', `error: ${row.error}`);
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'FIXED\n', "the hook's change is committed");
    const impl = ms.find((m) => m.kind === 'implementation')!;
    assert.equal(impl.status, 'completed');
    assert.ok(impl.commitSha);
  });

  test('a hook that keeps changing files fails after 3 passes, nothing committed', async () => {
    const { row, ms } = await run({}, hook('echo pass >> stamp.txt\n'));
    assert.equal(row.status, 'failed');
    const expected =
      'pre_commit_not_converged: the pre-commit hook (.svc/pre-commit) still changed files on pass 3 of 3; nothing was committed';
    assert.equal(row.error, expected);
    const impl = ms.find((m) => m.kind === 'implementation')!;
    assert.equal(impl.status, 'failed');
    assert.equal(impl.error, expected);
    assert.equal(branchTip(row.projectId!, row.branch!), row.baselineSha);
  });

  test('a failing hook fails the step with its exit code and output', async () => {
    const { row, ms } = await run({}, hook('echo "lint: app.txt has bad style"\nexit 2\n'));
    assert.equal(row.status, 'failed');
    assert.match(
      row.error ?? '',
      /^pre_commit_failed: the pre-commit hook \(\.svc\/pre-commit: sh hook\.sh\) failed with exit code 2 on pass 1; nothing was committed\. Output: .*lint: app\.txt has bad style/s,
    );
    assert.equal(ms.find((m) => m.kind === 'implementation')!.status, 'failed');
    assert.equal(branchTip(row.projectId!, row.branch!), row.baselineSha);
  });
});
