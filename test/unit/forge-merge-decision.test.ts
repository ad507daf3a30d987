// The spec's merge-stage decision order (document 2), rule by rule, over structured observations
// (domain/forge/merge-decision.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type CheckEvidence,
  checkStateOfCi,
  decideMergeStep,
  MAX_CI_REPAIR_ATTEMPTS,
  type MergeObservation,
  refusalKindOf,
} from '../../domain/forge/merge-decision.ts';

const passed: CheckEvidence = { name: 'ci', state: 'passed' };
const obs = (over: Partial<MergeObservation> = {}): MergeObservation => ({
  behind: false,
  checks: [passed],
  mergeableState: 'clean',
  mergeable: true,
  refusal: null,
  requeriedAfterRefusal: false,
  repairedFingerprints: [],
  repairAttempts: 0,
  maxRepairAttempts: MAX_CI_REPAIR_ATTEMPTS,
  ...over,
});

test('nothing in the way -> merge; other mergeable states are diagnostic only', () => {
  assert.equal(MAX_CI_REPAIR_ATTEMPTS, 5);
  assert.deepEqual(
    { action: decideMergeStep(obs()).action, rule: decideMergeStep(obs()).rule },
    { action: 'merge', rule: 0 },
  );
  for (const state of ['unknown', 'unstable', 'has_hooks', null]) {
    const d = decideMergeStep(obs({ mergeableState: state, mergeable: null }));
    assert.equal(d.action, 'merge', String(state));
  }
});

test('rule 1: behind main -> sync and wait, no repair attempt consumed, even with failing or pending checks', () => {
  for (const checks of [
    [passed],
    [{ name: 'ci', state: 'failed' as const }],
    [{ name: 'ci', state: 'pending' as const }],
  ]) {
    const d = decideMergeStep(obs({ behind: true, mergeableState: 'behind', checks }));
    assert.equal(d.action, 'sync_and_wait');
    assert.equal(d.rule, 1);
    assert.equal(d.consumesRepairAttempt, false);
  }
  // A sync of a conflicting branch would only fail: the conflict path decides instead.
  const d = decideMergeStep(
    obs({ behind: true, mergeableState: 'dirty', mergeable: false, conflictFiles: ['a.txt'] }),
  );
  assert.equal(d.action, 'resolve_conflict');
});

test('rule 2: a refused merge is re-queried before anything acts on it', () => {
  const d = decideMergeStep(obs({ refusal: { kind: 'rule', reason: 'required check pending' } }));
  assert.equal(d.action, 'requery');
  assert.equal(d.rule, 2);
  // After the re-query the fresh evidence decides.
  const after = decideMergeStep(
    obs({
      refusal: { kind: 'rule', reason: 'required check pending' },
      requeriedAfterRefusal: true,
      checks: [{ name: 'ci', state: 'pending' }],
    }),
  );
  assert.equal(after.action, 'wait');
});

test('rule 3: new failing checks -> CI repair (consumes an attempt); pending -> wait; failing outranks pending', () => {
  const failing: CheckEvidence = { name: 'ci', state: 'failed', fingerprint: 'ci:TypeError x' };
  const d = decideMergeStep(obs({ checks: [failing, { name: 'lint', state: 'pending' }] }));
  assert.equal(d.action, 'ci_repair');
  assert.equal(d.rule, 3);
  assert.equal(d.consumesRepairAttempt, true);
  assert.deepEqual(d.failing, [failing]);
  const w = decideMergeStep(obs({ checks: [passed, { name: 'lint', state: 'pending' }] }));
  assert.equal(w.action, 'wait');
  assert.deepEqual(w.pending, ['lint']);
  assert.equal(w.consumesRepairAttempt, false);
  // pending outranks a conflict ("with no pending checks")
  const pc = decideMergeStep(
    obs({ checks: [{ name: 'ci', state: 'pending' }], mergeableState: 'dirty', mergeable: false }),
  );
  assert.equal(pc.action, 'wait');
});

test('rule 3: an already-repaired fingerprint is not repaired again; attempts exhausted fail visibly', () => {
  const failing: CheckEvidence = { name: 'ci', state: 'failed', fingerprint: 'ci:sig' };
  const same = decideMergeStep(
    obs({ checks: [failing], repairedFingerprints: ['ci:sig'], repairAttempts: 1 }),
  );
  assert.equal(same.action, 'fail_visible');
  assert.equal(same.consumesRepairAttempt, false);
  const other = decideMergeStep(
    obs({
      checks: [{ ...failing, fingerprint: 'ci:other' }],
      repairedFingerprints: ['ci:sig'],
      repairAttempts: 1,
    }),
  );
  assert.equal(other.action, 'ci_repair');
  const exhausted = decideMergeStep(obs({ checks: [failing], repairAttempts: 5 }));
  assert.equal(exhausted.action, 'fail_visible');
  assert.match(exhausted.reason, /exhausted \(5\)/);
  const fourth = decideMergeStep(obs({ checks: [failing], repairAttempts: 4 }));
  assert.equal(fourth.action, 'ci_repair');
});

test('a cancelled CI check is not a code failure: re-run and wait, never repair', () => {
  const d = decideMergeStep(obs({ checks: [{ name: 'ci', state: 'cancelled' }] }));
  assert.equal(d.action, 'wait');
  assert.equal(d.consumesRepairAttempt, false);
  assert.deepEqual(d.rerun, ['ci']);
  // and a cancelled check beside a passed one still blocks the merge until re-run
  assert.equal(
    decideMergeStep(obs({ checks: [passed, { name: 'e2e', state: 'cancelled' }] })).action,
    'wait',
  );
});

test('rule 4: a real conflict goes to the resolver (dirty, explicit conflict refusal, mergeable false with no better state)', () => {
  const dirty = decideMergeStep(
    obs({ mergeableState: 'dirty', mergeable: false, conflictFiles: ['src/a.ts'] }),
  );
  assert.equal(dirty.action, 'resolve_conflict');
  assert.equal(dirty.rule, 4);
  assert.deepEqual(dirty.conflictFiles, ['src/a.ts']);
  const explicit = decideMergeStep(
    obs({
      refusal: { kind: 'conflict', reason: 'Merge conflict' },
      requeriedAfterRefusal: true,
      mergeableState: 'unknown',
    }),
  );
  assert.equal(explicit.action, 'resolve_conflict');
  const bare = decideMergeStep(obs({ mergeableState: null, mergeable: false }));
  assert.equal(bare.action, 'resolve_conflict');
  // mergeable false explained by a better state is not a conflict
  const blocked = decideMergeStep(
    obs({
      mergeableState: 'blocked',
      mergeable: false,
      refusal: { kind: 'review', reason: 'review required' },
      requeriedAfterRefusal: true,
    }),
  );
  assert.equal(blocked.action, 'pause_for_rules');
});

test('rule 4: authoritative dirty state outranks generic repository-rule text', () => {
  const d = decideMergeStep(
    obs({
      mergeableState: 'dirty',
      mergeable: false,
      refusal: { kind: 'rule', reason: 'Repository rule violations found' },
      requeriedAfterRefusal: true,
    }),
  );
  assert.equal(d.action, 'resolve_conflict');
  assert.equal(d.rule, 4);
});

test('rule 5: an explicit rule, required-check, review, draft or protection refusal with no other evidence pauses', () => {
  for (const kind of ['rule', 'required_check', 'review', 'draft', 'branch_protection'] as const) {
    const d = decideMergeStep(
      obs({
        mergeableState: 'blocked',
        refusal: { kind, reason: `refused: ${kind}` },
        requeriedAfterRefusal: true,
      }),
    );
    assert.equal(d.action, 'pause_for_rules', kind);
    assert.equal(d.rule, 5);
    assert.equal(d.reason, `refused: ${kind}`);
  }
  // ...but failing evidence goes to repair first
  const f = decideMergeStep(
    obs({
      checks: [{ name: 'ci', state: 'failed', fingerprint: 'x' }],
      refusal: { kind: 'required_check', reason: 'required check failed' },
      requeriedAfterRefusal: true,
    }),
  );
  assert.equal(f.action, 'ci_repair');
});

test('rule 6: permission, API and infrastructure errors keep their reason and fail visibly; so does an unclassified refusal', () => {
  for (const kind of ['permission', 'api', 'infrastructure'] as const) {
    const d = decideMergeStep(obs({ refusal: { kind, reason: `HTTP 403 ${kind}` } }));
    assert.equal(d.action, 'fail_visible', kind);
    assert.equal(d.rule, 6);
    assert.equal(d.reason, `HTTP 403 ${kind}`);
  }
  const other = decideMergeStep(
    obs({ refusal: { kind: 'other', reason: 'weird' }, requeriedAfterRefusal: true }),
  );
  assert.equal(other.action, 'fail_visible');
  assert.equal(other.reason, 'weird');
});

test('local forge evidence maps exhaustively: errored CI is failing, cancelled stays cancelled, missing is pending', () => {
  assert.equal(checkStateOfCi('passed'), 'passed');
  assert.equal(checkStateOfCi('failed'), 'failed');
  assert.equal(checkStateOfCi('error'), 'failed');
  assert.equal(checkStateOfCi('cancelled'), 'cancelled');
  for (const s of ['queued', 'running', 'missing'] as const) assert.equal(checkStateOfCi(s), 'pending');
  assert.equal(refusalKindOf('conflict'), 'conflict');
  assert.equal(refusalKindOf('failing'), 'required_check');
  assert.equal(refusalKindOf('pending'), 'required_check');
  assert.equal(refusalKindOf('rule'), 'rule');
  assert.equal(refusalKindOf('error'), 'infrastructure');
  // a refused local merge for a failing check, re-queried, goes to repair; for a rule only, pauses
  const failing = decideMergeStep(
    obs({
      refusal: { kind: refusalKindOf('failing'), reason: 'required check ci is failed' },
      requeriedAfterRefusal: true,
      checks: [{ name: 'ci', state: checkStateOfCi('failed'), fingerprint: 'ci:exit 7' }],
    }),
  );
  assert.equal(failing.action, 'ci_repair');
});
