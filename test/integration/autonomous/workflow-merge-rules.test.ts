// The merge stage's repository-rule pause end to end (issue 15 item 1-2; spec document 2, merge-stage
// decision order rule 5 and the `merging -> paused` transition row): the project's base branch
// requires one approval (`.svc/branch-protection.json`), so with CI green and nothing in conflict the
// merge is refused by the rule and the workflow is `paused (repository_rules)` with the requirement as
// its visible error. A resume while the requirement is unmet pauses again with the reason; once the
// PR is approved on the forge, a resume merges it. On the way, a cancelled CI run at the head is run
// again without using a CI repair attempt (a cancelled check is not a code failure).
// Real Temporal worker, real database (SQLite, or PostgreSQL with DATABASE_URL), real git, fake CLI.
// store-independent: the workflow's merge rules; the rows its activities write are covered on both stores
//   by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { localForgeFromSettings } from '../../../services/forge/local-forge.ts';
import {
  type Actor,
  AUTONOMOUS_REFUSED,
  pauseUpdate,
  resumeUpdate,
} from '../../../workflows/autonomous/contract.ts';
import { startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
const actor: Actor = { userId: 0, username: 'tester' };

before(async () => {
  world = await startWorkflowWorld();
  actor.userId = world.userId;
});
after(async () => {
  await world?.close();
});

const handle = (workflowId: string) => world.handle(workflowId);

describe('merge refused by repository rules', () => {
  test('paused with the requirement; resumed while unmet -> paused again; approved -> merged', async () => {
    const project = world.project(stepScript(), {
      '.svc/branch-protection.json': JSON.stringify({ required_approvals: 1, required_checks: ['ci'] }),
    });
    const [wf] = await world.create(project);
    const id = wf!.workflowId;
    await world.start(id);
    let row = await world.waitFor(id, (r) => ['paused', 'failed', 'completed'].includes(r.status), 'a pause');
    assert.equal(row.status, 'paused', `error: ${row.error}`);
    assert.equal(row.pausedBy, 'repository_rules');
    assert.equal(row.currentPhase, 'merge');
    assert.equal(row.error, 'required review: 1 approval(s) required, 0 given');
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'broken\n', 'nothing merged');
    assert.equal(row.ciRepairAttempts, 0);
    let kinds = (await world.milestones(id)).map((m) => m.kind);
    assert.ok(!kinds.includes('merge') && !kinds.includes('ci_diagnosis'), kinds.join(' '));

    // A rule pause is not a manual pause: pausing again is refused; a resume re-checks the rule.
    const h = await handle(id);
    await assert.rejects(
      h.executeUpdate(pauseUpdate, { args: [{ actor }] }),
      (err: Error & { cause?: { type?: string } }) => {
        assert.equal(err.cause?.type, AUTONOMOUS_REFUSED);
        return true;
      },
    );
    const resumed = await h.executeUpdate(resumeUpdate, { args: [{ actor }] });
    assert.equal(resumed.status, 'merging');
    row = await world.waitFor(id, (r) => r.status !== 'merging', 'the second pause');
    assert.equal(row.status, 'paused');
    assert.equal(row.pausedBy, 'repository_rules');
    assert.equal(row.error, 'required review: 1 approval(s) required, 0 given');

    // The forge side: a cancelled CI run at the head (a stopped run) and then the approval.
    const forge = localForgeFromSettings(world.app.settings, world.app.database);
    const repo = await forge.ensureRepository({ id: row.projectId!, path: row.projectPath! });
    const pr = await forge.getPullRequest(repo, row.prNumber!);
    const cancelled = await forge.runCi(pr, { signal: AbortSignal.abort() });
    assert.equal(cancelled.status, 'cancelled');
    await forge.reviewPullRequest(pr, { reviewer: 'maintainer', state: 'approved' });

    await h.executeUpdate(resumeUpdate, { args: [{ actor }] });
    row = await world.waitFor(id, (r) => ['completed', 'failed', 'paused'].includes(r.status), 'the end');
    assert.equal(row.status, 'completed', `error: ${row.error}`);
    assert.equal(row.error, null);
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'fixed\n', 'merged after the approval');
    assert.equal(row.ciRepairAttempts, 0, 'the cancelled run used no repair attempt');
    const runs = (await forge.ciRunsOf(pr)).map((r) => r.status);
    assert.deepEqual(runs.slice(-2), ['cancelled', 'passed'], `CI runs: ${runs.join(', ')}`);
    kinds = (await world.milestones(id)).map((m) => m.kind);
    assert.ok(!kinds.includes('ci_diagnosis'), kinds.join(' '));
    assert.equal(kinds.filter((k) => k === 'merge').length, 1);
  });
});
