// The other ways an autonomous workflow ends or stops, end to end on the real worker: a rejected
// acceptance verification pauses it for a human who overrides it (verified_by recorded); with the
// acceptance check disabled completion follows the merge; an upstream hard quota pauses it for a
// manual resume only; a conflicting change on main is resolved by the conflict-repair step; `done`
// wraps a waiting workflow up; agent_max_concurrent_workflows keeps a second workflow pending.
// store-independent: the workflow's milestone outcomes; the rows its activities write are covered on both
//   stores by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Actor,
  cancelRoundUpdate,
  doneUpdate,
  resumeUpdate,
  verificationOverrideUpdate,
} from '../../../workflows/autonomous/contract.ts';
import { ANTHROPIC_CREDIT_TOO_LOW } from '../../fixtures/mock-provider.ts';
import { waitForFile } from './runner-support.ts';
import { startWorkflowWorld, stepScript, UNCONFINED, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
const actor: Actor = { userId: 0, username: 'reviewer-1' };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-wf-outcomes-'));
const NO_CREDIT = 'MARK-NO-CREDIT-FOR-WORKFLOW';

before(async () => {
  world = await startWorkflowWorld({ env: UNCONFINED }); // pid files in a private temp dir
  actor.userId = world.userId;
});
after(async () => {
  await world?.close();
});

const handle = (workflowId: string) => world.handle(workflowId);

async function run(script = stepScript()) {
  const [wf] = await world.create(world.project(script));
  await world.start(wf!.workflowId);
  return wf!.workflowId;
}

describe('acceptance verification', () => {
  test('a rejected verdict pauses (verification); the override completes it and records verified_by', async () => {
    const id = await run(
      stepScript({
        acceptance_verification: { steps: [{ call: 1 }, { text: 'Not met.\nVERDICT: rejected' }] },
      }),
    );
    const paused = await world.waitFor(
      id,
      (r) => r.status === 'paused' || r.status === 'completed',
      'paused',
    );
    assert.equal(paused.status, 'paused');
    assert.equal(paused.pausedBy, 'verification');
    assert.equal(paused.verificationStatus, 'rejected');
    const verification = (await world.milestones(id)).filter((m) => m.kind === 'acceptance_verification');
    assert.equal(verification.length, 1);
    assert.equal(verification[0]!.status, 'completed', 'the running row was finalized in place');
    const r = await (await handle(id)).executeUpdate(verificationOverrideUpdate, {
      args: [{ actor, note: 'checked by hand' }],
    });
    assert.equal(r.status, 'completed');
    const row = await world.row(id);
    assert.equal(row.verifiedBy, 'reviewer-1');
    assert.ok(row.verifiedAt);
    assert.match(row.manualOverrideContext ?? '', /checked by hand/);
  });

  test('with the acceptance check disabled, completion follows the merge', async () => {
    world.app.settings.autonomous.acceptance_verification_enabled = false;
    try {
      const id = await run();
      const row = await world.waitFor(
        id,
        (r) => ['completed', 'failed', 'paused'].includes(r.status),
        'an end',
      );
      assert.equal(row.status, 'completed');
      const kinds = (await world.milestones(id)).map((m) => m.kind);
      assert.equal(kinds.at(-1), 'merge');
      assert.ok(!kinds.includes('acceptance_verification'));
    } finally {
      world.app.settings.autonomous.acceptance_verification_enabled = true;
    }
  });
});

describe('upstream hard quota', () => {
  test('pauses (hard_quota) and continues only after a manual resume', async () => {
    world.mock.setBehaviour({ markedErrors: { [NO_CREDIT]: ANTHROPIC_CREDIT_TOO_LOW } });
    const id = await run(
      stepScript({
        implementation: {
          steps: [
            { callOrDie: NO_CREDIT },
            { write: { path: 'app.txt', content: 'fixed\n' } },
            { text: 'ok' },
          ],
        },
      }),
    );
    const paused = await world.waitFor(id, (r) => r.status === 'paused' || r.status === 'failed', 'paused');
    assert.equal(paused.status, 'paused', `${paused.error}`);
    assert.equal(paused.pausedBy, 'hard_quota');
    assert.match(paused.error ?? '', /hard quota/);
    // The provider has credit again; nothing resumes it by itself.
    world.mock.setBehaviour({ markedErrors: {} });
    await sleep(1500);
    assert.equal((await world.row(id)).status, 'paused');
    const r = await (await handle(id)).executeUpdate(resumeUpdate, { args: [{ actor }] });
    assert.equal(r.status, 'developing');
    const done = await world.waitFor(id, (w) => ['completed', 'failed'].includes(w.status), 'an end');
    assert.equal(done.status, 'completed', `${done.error}`);
    const impl = (await world.milestones(id)).filter((m) => m.kind === 'implementation');
    assert.deepEqual(
      impl.map((m) => m.status),
      ['failed', 'completed'],
    );
  });
});

describe('merge stage', () => {
  test('a conflicting change on main is resolved by the conflict-repair step, then merged', async () => {
    const pidFile = path.join(tmp, 'conflict.pid');
    const base = stepScript();
    const project = world.project({
      ...base,
      implementation: {
        pidFile,
        steps: [
          { call: 1 },
          { sleep: 1500 },
          { write: { path: 'app.txt', content: 'fixed\n' } },
          { text: 'implemented' },
        ],
      },
      conflict_repair: {
        steps: [
          { call: 1 },
          { write: { path: 'app.txt', content: 'fixed\nupstream line\n' } },
          { text: 'merged both' },
        ],
      },
    });
    const [wf] = await world.create(project);
    await world.start(wf!.workflowId);
    await waitForFile(pidFile, 60_000);
    // Someone changes the same line on main while the agent works.
    const row0 = await world.row(wf!.workflowId);
    const bare = path.join(world.app.settings.dataDir, 'forge', `${row0.projectId}.git`);
    const clone = path.join(tmp, 'clone');
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'o',
      GIT_AUTHOR_EMAIL: 'o@x',
      GIT_COMMITTER_NAME: 'o',
      GIT_COMMITTER_EMAIL: 'o@x',
    };
    execFileSync('git', ['clone', '-q', bare, clone], { env });
    writeFileSync(path.join(clone, 'app.txt'), 'broken upstream\nupstream line\n');
    execFileSync('git', ['commit', '-q', '-am', 'upstream change'], { cwd: clone, env });
    execFileSync('git', ['push', '-q', 'origin', 'main'], { cwd: clone, env });
    const row = await world.waitFor(
      wf!.workflowId,
      (r) => ['completed', 'failed', 'paused'].includes(r.status),
      'an end',
      120_000,
    );
    assert.equal(row.status, 'completed', `${row.error}`);
    const kinds = (await world.milestones(wf!.workflowId)).map((m) => m.kind);
    assert.ok(kinds.includes('conflict_repair'), kinds.join(','));
    assert.equal(world.mergedFile(row.projectId!, 'app.txt'), 'fixed\nupstream line\n');
  });
});

describe('done and concurrency', () => {
  test('done wraps up a waiting workflow: completed, worktree removed', async () => {
    const pidFile = path.join(tmp, 'done.pid');
    const id = await run(
      stepScript({ implementation: { pidFile, steps: [{ call: 1 }, { sleep: 60_000 }] } }),
    );
    await waitForFile(pidFile, 60_000);
    const plan = (await world.milestones(id)).find((m) => m.kind === 'plan')!;
    const h = await handle(id);
    await h.executeUpdate(cancelRoundUpdate, {
      args: [{ actor, milestoneId: plan.id, milestonePhase: 'planning' }],
    });
    const worktree = (await world.row(id)).preferredWorktreePath!;
    assert.ok(existsSync(worktree));
    const r = await h.executeUpdate(doneUpdate, { args: [{ actor }] });
    assert.equal(r.status, 'completed');
    assert.equal((await h.result()).status, 'completed');
    assert.ok(!existsSync(worktree), 'the worktree was cleaned up');
  });

  test('agent_max_concurrent_workflows = 1: the second workflow stays pending until the first is over', async () => {
    const original = world.app.settings.autonomous.agent_max_concurrent_workflows;
    world.app.settings.autonomous.agent_max_concurrent_workflows = 1;
    try {
      // Two projects: on one project the second change would find main already fixed (no new code).
      const [a] = await world.create(world.project(stepScript()));
      const [b] = await world.create(world.project(stepScript()));
      await world.start(a!.workflowId);
      await world.waitFor(a!.workflowId, (r) => r.status !== 'pending', 'started');
      await world.start(b!.workflowId);
      for (;;) {
        const [ra, rb] = [await world.row(a!.workflowId), await world.row(b!.workflowId)];
        if (ra.status !== 'completed')
          assert.equal(rb.status, 'pending', `b is ${rb.status} while a is ${ra.status}`);
        if (rb.status === 'completed') break;
        for (const r of [ra, rb])
          assert.ok(!['failed', 'paused'].includes(r.status), `${r.status}: ${r.error}`);
        await sleep(100);
      }
      const [fa, fb] = [await world.row(a!.workflowId), await world.row(b!.workflowId)];
      assert.ok(
        fb.startedAt! >= fa.completedAt!,
        `b started ${fb.startedAt?.toISOString()}, a completed ${fa.completedAt?.toISOString()}`,
      );
    } finally {
      world.app.settings.autonomous.agent_max_concurrent_workflows = original;
    }
  });
});
