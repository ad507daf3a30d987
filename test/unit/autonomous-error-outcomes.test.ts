// The pure parts of issue 15 items 4 and 6: configured retry timing, the bound on context-overflow
// runs, the compact prompt keeping the step header, the milestone outcome of a run, and the acceptance
// snapshot in the verifier's prompt.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiBackoffSeconds, backoffDelaySeconds, decideAfterError } from '../../domain/autonomous/errors.ts';
import { DEFAULT_RETRY_TIMING, retryTiming } from '../../domain/autonomous/limits.ts';
import { milestoneOutcome } from '../../domain/autonomous/milestones.ts';
import { stepPrompt } from '../../domain/autonomous/prompts.ts';
import { buildCompactPrompt } from '../../services/autonomous/runner/compact-prompt.ts';

const settingsView = (a: Record<string, unknown> = {}) => ({
  AUTONOMOUS_TASK_TIMEOUT: 3600,
  AUTONOMOUS_MAX_CHANGED_FILES: 60,
  autonomous: {
    acceptance_verification_enabled: true,
    planning_timeout_seconds: 1800,
    ci_repair_attempts: 5,
    agent_task_cgroup_enabled: 'auto' as const,
    ...a,
  },
});

test('retry timing: the spec figures by default, the settings when given', () => {
  assert.deepEqual(retryTiming(settingsView()), DEFAULT_RETRY_TIMING);
  assert.deepEqual(DEFAULT_RETRY_TIMING, {
    transientDelaySeconds: 5,
    apiBackoffInitialSeconds: 10,
    apiRetryWindowSeconds: 1800,
    preparationRetryInitialSeconds: 2,
  });
  assert.deepEqual(
    retryTiming(
      settingsView({
        transient_retry_delay_seconds: 1,
        api_backoff_initial_seconds: 2,
        transient_api_retry_window_seconds: 30,
        preparation_retry_initial_seconds: 0.2,
      }),
    ),
    {
      transientDelaySeconds: 1,
      apiBackoffInitialSeconds: 2,
      apiRetryWindowSeconds: 30,
      preparationRetryInitialSeconds: 0.2,
    },
  );
});

test('configured timing: fixed delay, exponential delays from the first one, and the window', () => {
  const timing = { transientDelaySeconds: 1, apiBackoffInitialSeconds: 2, apiRetryWindowSeconds: 10 };
  assert.deepEqual(
    decideAfterError({ class: 'runner_failure' }, { failures: 1, elapsedSeconds: 0 }, timing),
    {
      kind: 'retry',
      delaySeconds: 1,
      freshTranscript: false,
    },
  );
  assert.deepEqual(
    [1, 2, 3].map((n) => backoffDelaySeconds(n, 2)),
    [2, 4, 8],
  );
  assert.equal(apiBackoffSeconds(1), 10, 'the spec default stays');
  const rate = { class: 'provider_rate_limit' } as const;
  assert.deepEqual(decideAfterError(rate, { failures: 2, elapsedSeconds: 5 }, timing), {
    kind: 'retry',
    delaySeconds: 4,
    freshTranscript: false,
  });
  // 7 s elapsed + the next 4 s delay passes the 10 s window: failed, never paused.
  const d = decideAfterError(rate, { failures: 2, elapsedSeconds: 7 }, timing);
  assert.equal(d.kind, 'transition');
  if (d.kind === 'transition') {
    assert.deepEqual(d.trigger, { type: 'fail' });
    assert.match(d.error, /10 s retry window/);
  }
});

test('context overflow: one more fresh run from the workflow, then the step fails', () => {
  const first = decideAfterError({ class: 'context_overflow' }, { failures: 1, elapsedSeconds: 0 });
  assert.deepEqual(first, { kind: 'retry', delaySeconds: 0, freshTranscript: true });
  const second = decideAfterError({ class: 'context_overflow' }, { failures: 2, elapsedSeconds: 0 });
  assert.equal(second.kind, 'transition');
  if (second.kind === 'transition') {
    assert.deepEqual(second.trigger, { type: 'fail' });
    assert.match(second.error, /^context_overflow: .*2 times/);
  }
});

test('the compact prompt keeps the step header first and stays bounded', () => {
  const original = `Step: implementation (workflow aw-1, round 2)\nDo it.\n\nRequirement:\n${'x'.repeat(50_000)}END`;
  const compact = buildCompactPrompt(original, 4000);
  assert.ok(compact.startsWith('Step: implementation (workflow aw-1, round 2)\nYour previous conversation'));
  assert.ok(compact.length <= 4000);
  assert.ok(compact.endsWith('END'));
  // Without a header (or an absurdly long first line) the preamble comes first.
  assert.ok(buildCompactPrompt('do the thing').startsWith('Your previous conversation'));
  assert.ok(buildCompactPrompt(`Step: ${'y'.repeat(500)}\nrest`).startsWith('Your previous conversation'));
});

test('milestone outcome of a run', () => {
  const run = (o: Partial<Parameters<typeof milestoneOutcome>[0]>) =>
    milestoneOutcome({ outcome: 'ok', attemptOutcomes: ['ok'], expectedCode: false, committed: false, ...o });
  assert.equal(run({}), 'ok');
  assert.equal(run({ outcome: 'runner_failure', attemptOutcomes: ['runner_failure'] }), 'runner_failure');
  assert.equal(run({ outcome: 'empty_output' }), 'empty_output');
  assert.equal(run({ outcome: 'context_overflow' }), 'context_overflow');
  assert.equal(run({ attemptOutcomes: ['context_overflow', 'ok'] }), 'context_overflow_recovered');
  assert.equal(run({ expectedCode: true, committed: false }), 'no_new_code');
  assert.equal(run({ expectedCode: true, committed: true }), 'ok');
  assert.equal(run({ outcome: 'timeout' }), 'timeout');
});

test("the verifier's prompt carries the acceptance snapshot, and says when the issue changed", () => {
  const base = { workflowId: 'aw-1', requirement: 'Resolve issue #7 of this repository.', round: 1 };
  const same = stepPrompt('acceptance_verification', {
    ...base,
    acceptance: { text: '#7 Title\n\nBody', source: 'issue', changedSinceStart: false },
  });
  assert.match(
    same,
    /Acceptance snapshot \(the issue as it reads now; check the merged code against it\):\n#7 Title\n\nBody/,
  );
  assert.ok(!same.includes('changed since'));
  const changed = stepPrompt('acceptance_verification', {
    ...base,
    acceptance: { text: '#7 Title\n\nBody v2', source: 'issue', changedSinceStart: true },
  });
  assert.match(changed, /the issue changed since this workflow started/);
  // Other steps never carry it.
  assert.ok(
    !stepPrompt('implementation', {
      ...base,
      acceptance: { text: 'x', source: 'text', changedSinceStart: true },
    }).includes('Acceptance snapshot'),
  );
});
