// Error classes of autonomous workflows (domain/autonomous/errors.ts, spec document 2 "Errors" 4):
// classification from structured runner facts only, the class -> behaviour mapping, and the decisions
// (retry counts, backoff window, pauses, fail-closed integrity violation).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AutonomousError,
  apiBackoffSeconds,
  behaviourOf,
  classifyRunnerError,
  decideAfterError,
  INTEGRITY_EXIT_CODE,
  INTEGRITY_MARKER,
} from '../../domain/autonomous/errors.ts';
import { transition } from '../../domain/autonomous/transitions.ts';

const fail = { outcome: 'runner_failure' as const, exitCode: 1 };

test('classification: integrity violation first (exit code 68 or the launcher flag), fail closed', () => {
  assert.equal(INTEGRITY_EXIT_CODE, 68);
  assert.equal(INTEGRITY_MARKER, 'SVC_REPO_INTEGRITY_VIOLATION');
  assert.deepEqual(classifyRunnerError({ outcome: 'runner_failure', exitCode: 68 }), {
    class: 'repo_integrity_violation',
  });
  assert.deepEqual(classifyRunnerError({ outcome: 'ok', exitCode: 0, integrityViolation: true }), {
    class: 'repo_integrity_violation',
  });
  const d = decideAfterError({ class: 'repo_integrity_violation' }, { failures: 1, elapsedSeconds: 0 });
  assert.equal(d.kind, 'fail_closed');
  if (d.kind === 'fail_closed') {
    assert.equal(d.exitCode, 68);
    assert.equal(d.marker, 'SVC_REPO_INTEGRITY_VIOLATION');
    assert.match(d.error, /SVC_REPO_INTEGRITY_VIOLATION/);
    assert.deepEqual(d.trigger, { type: 'fail' });
  }
});

test('classification: runner outcomes map to their own classes; ok is no error', () => {
  assert.equal(classifyRunnerError({ outcome: 'ok', exitCode: 0 }), undefined);
  assert.deepEqual(classifyRunnerError({ outcome: 'context_overflow', exitCode: 1 }), {
    class: 'context_overflow',
  });
  assert.deepEqual(classifyRunnerError({ outcome: 'timeout', exitCode: null }), { class: 'task_timeout' });
  assert.deepEqual(classifyRunnerError({ outcome: 'cancelled', exitCode: null }), { class: 'cancelled' });
  assert.deepEqual(classifyRunnerError(fail), { class: 'runner_failure' });
  assert.deepEqual(classifyRunnerError({ outcome: 'empty_output', exitCode: 0 }), { class: 'empty_output' });
});

test('classification: zero-token error envelopes (our proxy and the providers), never message text', () => {
  const env = (e: object) => classifyRunnerError({ ...fail, envelope: { tokens: 0, ...e } });
  assert.deepEqual(env({ httpStatus: 429, type: 'quota_exceeded' }), {
    class: 'app_quota',
    reason: 'exceeded',
  });
  assert.deepEqual(env({ httpStatus: 503, type: 'quota_check_failed' }), {
    class: 'app_quota',
    reason: 'check_failed',
  });
  assert.deepEqual(env({ httpStatus: 429, code: 'insufficient_quota' }), { class: 'hard_quota' });
  assert.deepEqual(env({ httpStatus: 429, code: 'rate_limit_exceeded' }), { class: 'provider_rate_limit' });
  assert.deepEqual(env({ httpStatus: 429, type: 'rate_limit_error' }), { class: 'provider_rate_limit' });
  assert.deepEqual(env({ httpStatus: 529, type: 'overloaded_error' }), {
    class: 'transient_api',
    httpStatus: 529,
  });
  assert.deepEqual(env({ httpStatus: 502 }), { class: 'transient_api', httpStatus: 502 });
  assert.deepEqual(env({ httpStatus: 429 }), { class: 'transient_api', httpStatus: 429 });
  assert.deepEqual(env({ httpStatus: 502, type: 'upstream_error' }), {
    class: 'transient_api',
    httpStatus: 502,
  });
  assert.deepEqual(env({ httpStatus: 400, code: 'context_length_exceeded' }), { class: 'context_overflow' });
  assert.deepEqual(env({ type: 'model_context_window_exceeded' }), { class: 'context_overflow' });
  // A 4xx that is none of these stays a runner failure.
  assert.deepEqual(env({ httpStatus: 400, type: 'invalid_request_error' }), { class: 'runner_failure' });
  // An envelope of a call that spent tokens is not an error envelope.
  assert.deepEqual(classifyRunnerError({ ...fail, envelope: { tokens: 12, code: 'insufficient_quota' } }), {
    class: 'runner_failure',
  });
  // No structured field: whatever the CLI wrote, no quota pause.
  assert.deepEqual(classifyRunnerError({ ...fail, envelope: { tokens: 0 } }), { class: 'runner_failure' });
});

test('behaviour: exhaustive mapping of every class', () => {
  const all: AutonomousError[] = [
    { class: 'transient_network', source: 'git' },
    { class: 'transient_api', httpStatus: 503 },
    { class: 'provider_rate_limit' },
    { class: 'hard_quota' },
    { class: 'app_quota', reason: 'exceeded' },
    { class: 'context_overflow' },
    { class: 'ci_evidence_insufficient', reason: 'logs_not_ready' },
    { class: 'repo_integrity_violation' },
    { class: 'verifier_failure', kind: 'infrastructure' },
    { class: 'ci_cancelled' },
    { class: 'runner_failure' },
    { class: 'empty_output' },
    { class: 'task_timeout' },
    { class: 'no_new_code' },
    { class: 'cancelled' },
  ];
  const actions = Object.fromEntries(all.map((e) => [e.class, behaviourOf(e).action]));
  assert.deepEqual(actions, {
    transient_network: 'retry_in_phase',
    transient_api: 'retry_in_phase',
    provider_rate_limit: 'retry_in_phase',
    hard_quota: 'pause',
    app_quota: 'pause',
    context_overflow: 'retry_fresh_transcript',
    ci_evidence_insufficient: 'wait_for_diagnosis',
    repo_integrity_violation: 'fail_closed',
    verifier_failure: 'retry_in_phase',
    ci_cancelled: 'rerun_ci',
    runner_failure: 'retry_in_phase',
    empty_output: 'retry_in_phase',
    task_timeout: 'fail',
    no_new_code: 'record_only',
    cancelled: 'record_only',
  });
  assert.throws(() => behaviourOf({ class: 'nonsense' } as unknown as AutonomousError), /unhandled case/);
});

test('transient network / Git: short retries in the phase, fail at the limit', () => {
  const e: AutonomousError = { class: 'transient_network', source: 'network' };
  for (let n = 1; n < 5; n++) {
    const d = decideAfterError(e, { failures: n, elapsedSeconds: 0 });
    assert.deepEqual(d, { kind: 'retry', delaySeconds: 5, freshTranscript: false });
  }
  const last = decideAfterError(e, { failures: 5, elapsedSeconds: 0 });
  assert.equal(last.kind, 'transition');
  if (last.kind === 'transition') assert.deepEqual(last.trigger, { type: 'fail' });
});

test('transient API and provider rate limit: exponential backoff inside 1800 s, never a pause', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8].map(apiBackoffSeconds), [10, 20, 40, 80, 160, 300, 300, 300]);
  for (const e of [
    { class: 'transient_api', httpStatus: 529 },
    { class: 'provider_rate_limit' },
  ] as AutonomousError[]) {
    let elapsed = 0;
    let n = 0;
    for (;;) {
      n++;
      const d = decideAfterError(e, { failures: n, elapsedSeconds: elapsed });
      if (d.kind !== 'retry') {
        assert.equal(d.kind, 'transition');
        if (d.kind === 'transition') assert.deepEqual(d.trigger, { type: 'fail' });
        break;
      }
      elapsed += d.delaySeconds;
    }
    assert.ok(elapsed <= 1800 && elapsed > 1400, `retried for ${elapsed} s`);
  }
});

test('quota classes pause: hard quota manual only, application quota auto-resumed', () => {
  const hard = decideAfterError({ class: 'hard_quota' }, { failures: 1, elapsedSeconds: 0 });
  const app = decideAfterError(
    { class: 'app_quota', reason: 'check_failed' },
    { failures: 1, elapsedSeconds: 0 },
  );
  assert.equal(hard.kind, 'transition');
  assert.equal(app.kind, 'transition');
  if (hard.kind !== 'transition' || app.kind !== 'transition') return;
  const base = {
    status: 'developing' as const,
    phase: 'development' as const,
    pausedBy: null,
    previousStatus: null,
    feedbackPhase: null,
    inBatch: false,
  };
  const h = transition(base, hard.trigger);
  const a = transition(base, app.trigger);
  assert.ok(h.ok && a.ok);
  if (h.ok && a.ok) {
    assert.equal(h.next.pausedBy, 'hard_quota');
    assert.equal(a.next.pausedBy, 'quota');
    assert.equal(transition(h.next, { type: 'quota_restored' }).ok, false);
    assert.equal(transition(a.next, { type: 'quota_restored' }).ok, true);
  }
});

test('context overflow: retry on the same line with a fresh transcript', () => {
  assert.deepEqual(decideAfterError({ class: 'context_overflow' }, { failures: 1, elapsedSeconds: 0 }), {
    kind: 'retry',
    delaySeconds: 0,
    freshTranscript: true,
  });
});

test('verifier failures: 3 attempts (parse failures 2), then paused for verification', () => {
  const infra: AutonomousError = { class: 'verifier_failure', kind: 'infrastructure' };
  const parse: AutonomousError = { class: 'verifier_failure', kind: 'unparsable' };
  assert.equal(decideAfterError(infra, { failures: 2, elapsedSeconds: 0 }).kind, 'retry');
  const d3 = decideAfterError(infra, { failures: 3, elapsedSeconds: 0 });
  assert.equal(decideAfterError(parse, { failures: 1, elapsedSeconds: 0 }).kind, 'retry');
  const p2 = decideAfterError(parse, { failures: 2, elapsedSeconds: 0 });
  for (const d of [d3, p2]) {
    assert.equal(d.kind, 'transition');
    if (d.kind === 'transition')
      assert.deepEqual(d.trigger, { type: 'verifier_verdict', verdict: 'retries_exhausted' });
  }
});

test('insufficient CI evidence: wait for diagnosis (6 polls), then fail with a permission hint', () => {
  const e: AutonomousError = { class: 'ci_evidence_insufficient', reason: 'no_permission' };
  assert.equal(decideAfterError(e, { failures: 5, elapsedSeconds: 0 }).kind, 'wait');
  const d = decideAfterError(e, { failures: 6, elapsedSeconds: 0 });
  assert.equal(d.kind, 'transition');
  if (d.kind === 'transition') assert.match(d.error, /permission/);
});

test('a cancelled CI check is not a code failure; no-new-code and cancelled runs are only recorded', () => {
  assert.deepEqual(decideAfterError({ class: 'ci_cancelled' }, { failures: 1, elapsedSeconds: 0 }), {
    kind: 'rerun_ci',
  });
  assert.deepEqual(decideAfterError({ class: 'no_new_code' }, { failures: 1, elapsedSeconds: 0 }), {
    kind: 'none',
  });
  assert.equal(
    decideAfterError({ class: 'task_timeout' }, { failures: 1, elapsedSeconds: 0 }).kind,
    'transition',
  );
});
