// The integrity check inside a real workflow (issue 15 item 5, "Tests": an agent that writes into
// `.git` is caught with exit 68 and nothing is pushed): a real Temporal worker, the local forge's bare
// repository and linked worktree, the probe CLI as cli_beta. The implementation step's agent writes a
// hook into the bare repository (isolation off, so the write goes through: the check is what stops it):
// the step fails closed, the milestone records the marker, the workflow fails, and neither the
// workflow's branch nor main moved on the forge.
// store-independent: the Git integrity check inside a workflow; workflow rows are covered on both stores
//   by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { workflowBranch } from '../../../domain/forge/branch-name.ts';
import { PROBE_CLI } from './isolation-support.ts';
import { startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;

before(async () => {
  world = await startWorkflowWorld({ env: { SVC_AUTONOMOUS_ISOLATION: 'off', SVC_SANDBOX: 'off' } }); // the integrity check on its own: the sandbox would stop the tamper first
  world.app.settings.autonomous.cli_paths = { cli_beta: PROBE_CLI };
});
after(async () => {
  await world?.close();
});

const sha = (gitDir: string, ref: string): string | null => {
  try {
    return execFileSync('git', ['--git-dir', gitDir, 'rev-parse', '--verify', '-q', ref]).toString().trim();
  } catch {
    return null;
  }
};

describe('integrity violation in a workflow', () => {
  test('a tampering implementation step fails the workflow closed (exit 68) and nothing is committed or pushed', async () => {
    const dir = world.project(stepScript());
    writeFileSync(
      path.join(dir, '.svc-fake', 'probe.json'),
      JSON.stringify({
        byStep: {
          implementation: {
            writes: [{ path: 'app.txt', content: 'fixed\n' }],
            tamper: ['hook'],
            text: 'implemented',
          },
          default: { text: 'The plan is fine.\nVERDICT: approved' },
        },
      }),
    );
    execFileSync('git', ['add', '-A'], { cwd: dir });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '-m', 'probe'], {
      cwd: dir,
    });
    const [wf] = await world.create(dir);
    assert.ok(wf);
    await world.start(wf.workflowId);
    const row = await world.waitFor(wf.workflowId, (r) => r.status === 'failed', 'failed', 120_000);
    const bare = path.join(world.app.settings.dataDir, 'forge', `${row.projectId}.git`);
    // The tamper happened (the check, not a permission, stopped it) ...
    assert.ok(existsSync(path.join(bare, 'hooks', 'pre-commit')), 'the hook was written');
    // ... and was caught on the step's milestone, with the marker.
    const ms = await world.milestones(wf.workflowId);
    const impl = ms.filter((m) => m.kind === 'implementation');
    assert.equal(impl.length, 1, 'fail closed: never retried');
    assert.equal(impl[0]!.status, 'failed');
    assert.match(
      impl[0]!.error ?? '',
      /^repo_integrity_violation: SVC_REPO_INTEGRITY_VIOLATION: Git metadata changed/,
    );
    assert.match(impl[0]!.error ?? '', /hooks\/pre-commit/);
    assert.equal(impl[0]!.commitSha ?? null, null, 'nothing committed');
    assert.match(row.error ?? '', /repo_integrity_violation|SVC_REPO_INTEGRITY_VIOLATION/);
    // Nothing pushed: the workflow branch is still at the baseline, main unchanged, app.txt not merged.
    assert.ok(row.baselineSha);
    const branch = sha(bare, `refs/heads/${workflowBranch(wf.workflowId)}`);
    assert.ok(branch === null || branch === row.baselineSha, `branch moved to ${branch}`);
    assert.equal(sha(bare, 'refs/heads/main'), row.baselineSha);
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'broken\n');
    assert.ok(!ms.some((m) => m.kind === 'merge' && m.status === 'completed'));
  });
});
