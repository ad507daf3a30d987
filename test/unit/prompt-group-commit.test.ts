// services/usage/prompt-group-commit.ts: items submitted while a write runs are written together by
// the next write (at most maxBatch each), every caller resolves after its own batch committed, a failed
// batch rejects exactly its own callers, and a lone item is written at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupCommit } from '../../services/usage/prompt-group-commit.ts';

/** A write that the test releases by hand, recording each batch. */
function gatedWrites() {
  const batches: number[][] = [];
  const gates: { release: () => void; fail: (e: Error) => void }[] = [];
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(items);
      gates.push({ release: resolve, fail: reject });
    });
  return { batches, gates, write };
}

const tick = () => new Promise((r) => setImmediate(r));

test('a lone item is written at once; items arriving during a write go together into the next', async () => {
  const w = gatedWrites();
  const gc = groupCommit(w.write, 3);
  const done: number[] = [];
  const submit = (n: number) => gc.submit(n).then(() => done.push(n));
  const first = submit(1);
  assert.deepEqual(w.batches, [[1]], 'written without waiting for company');
  const rest = [2, 3, 4, 5].map(submit);
  assert.equal(gc.pending(), 5);
  await tick();
  assert.deepEqual(done, [], 'nobody answered before the commit');
  w.gates[0]!.release();
  await first;
  await tick();
  assert.deepEqual(w.batches, [[1], [2, 3, 4]], 'the waiting items, at most maxBatch');
  assert.deepEqual(done, [1]);
  w.gates[1]!.release();
  await tick();
  assert.deepEqual(w.batches, [[1], [2, 3, 4], [5]]);
  assert.deepEqual(done, [1, 2, 3, 4]);
  w.gates[2]!.release();
  await Promise.all(rest);
  assert.deepEqual(done, [1, 2, 3, 4, 5]);
  assert.equal(gc.pending(), 0);
});

test('a failed batch rejects its own callers only; the next batch still runs', async () => {
  const w = gatedWrites();
  const gc = groupCommit(w.write, 10);
  const a = gc.submit(1);
  const b = gc.submit(2);
  const c = gc.submit(3);
  w.gates[0]!.fail(new Error('disk full'));
  await assert.rejects(a, /disk full/);
  await tick();
  assert.deepEqual(w.batches, [[1], [2, 3]]);
  w.gates[1]!.release();
  await Promise.all([b, c]);
  // After the queue ran dry, a new item starts a new write.
  const d = gc.submit(4);
  assert.deepEqual(w.batches.at(-1), [4]);
  w.gates[2]!.release();
  await d;
});
