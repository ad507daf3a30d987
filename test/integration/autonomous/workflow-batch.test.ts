// A batch of three requirements runs one workflow at a time, each on its own worktree pinned to the
// batch's one baseline, and every item is merged (the later ones sync with the earlier merges first).
// store-independent: the batch workflow's ordering on one baseline; the rows its activities write are
//   covered on both stores by workflow-e2e, workflow-api-e2e, workflow-crash and the chaos tests
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { batchesRepository } from '../../../db/repositories/autonomous/batches.ts';
import { STATUS_CLASS, type WorkflowStatus } from '../../../domain/autonomous/states.ts';
import { startWorkflowWorld, stepScript, type WorkflowWorld } from './workflow-support.ts';

let world: WorkflowWorld;
before(async () => {
  world = await startWorkflowWorld();
});
after(async () => {
  await world?.close();
});

test('a batch of three runs one at a time on one baseline and merges all three', async () => {
  const project = world.project(stepScript());
  const items = await world.create(project, {
    requirement: undefined,
    items: [{ requirement: 'first' }, { requirement: 'second' }, { requirement: 'third' }],
  });
  assert.equal(items.length, 3);
  assert.deepEqual(
    items.map((w) => w.status),
    ['pending', 'queued', 'queued'],
  );
  for (const w of items) await world.start(w.workflowId);

  let maxActive = 0;
  const deadline = Date.now() + 150_000;
  for (;;) {
    const rows = await Promise.all(items.map((w) => world.row(w.workflowId)));
    const active = rows.filter((r) => ['running', 'held'].includes(STATUS_CLASS[r.status as WorkflowStatus]));
    maxActive = Math.max(maxActive, active.length);
    // Order: an item starts only after every earlier one is over.
    for (const [i, r] of rows.entries())
      if (STATUS_CLASS[r.status as WorkflowStatus] !== 'scheduling')
        for (const earlier of rows.slice(0, i))
          assert.ok(
            ['completed', 'failed', 'cancelled'].includes(earlier.status),
            `item ${i} is ${r.status} while item ${earlier.batchPosition} is ${earlier.status}`,
          );
    if (rows.every((r) => r.status === 'completed')) break;
    assert.ok(
      !rows.some((r) => r.status === 'failed' || r.status === 'paused'),
      rows.map((r) => `${r.status}:${r.error}`).join(' '),
    );
    assert.ok(Date.now() < deadline, `batch did not finish: ${rows.map((r) => r.status).join(', ')}`);
    await sleep(100);
  }
  assert.equal(maxActive, 1, 'one item at a time');
  const rows = await Promise.all(items.map((w) => world.row(w.workflowId)));
  const baseline = rows[0]!.baselineSha;
  assert.match(baseline ?? '', /^[0-9a-f]{40}$/);
  assert.ok(
    rows.every((r) => r.baselineSha === baseline),
    'every item is pinned to the batch baseline',
  );
  assert.equal(new Set(rows.map((r) => r.preferredWorktreePath)).size, 3, 'independent worktrees');
  assert.equal(new Set(rows.map((r) => r.prNumber)).size, 3, 'one pull request each');
  // The last item closes the batch just after its own row says completed.
  const batches = batchesRepository(world.app.database);
  let batch = await batches.find(rows[0]!.batchId!);
  for (let i = 0; i < 100 && batch!.status !== 'completed'; i++) {
    await sleep(100);
    batch = await batches.find(rows[0]!.batchId!);
  }
  assert.equal(batch!.baselineSha, baseline);
  assert.equal(batch!.status, 'completed');
  assert.equal(world.mergedFile(rows[0]!.projectId!, 'app.txt'), 'fixed\n');
});
