// The model proxy's own quota refusals as the runner reports them (domain/proxy/session-call-errors.ts,
// services/autonomous/runner/outcome.ts) and as the workflow classifies them (domain/autonomous/errors.ts
// classifyRunnerError, called with the envelope's code as both `type` and `code`, zero tokens).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyRunnerError } from '../../domain/autonomous/errors.ts';
import { PROVIDER_ERROR_CLASSES } from '../../domain/proxy/provider-errors.ts';
import {
  isProxyQuotaRefusal,
  PROXY_QUOTA_REFUSALS,
  sessionCallErrorOf,
  splitSessionCallError,
} from '../../domain/proxy/session-call-errors.ts';
import {
  classifyAttempt,
  type ErrorEnvelope,
  errorEnvelope,
} from '../../services/autonomous/runner/outcome.ts';

const failed = {
  stoppedFor: null,
  exitCode: 1,
  signal: null,
  turnEnded: false,
  contextOverflow: false,
  producedOutput: false,
} as const;

const asWorkflow = (env: ErrorEnvelope | undefined) =>
  classifyRunnerError({
    outcome: env?.outcome ?? 'ok',
    exitCode: env?.exitCode ?? 0,
    envelope: env ? { httpStatus: null, type: env.code ?? null, code: env.code ?? null, tokens: 0 } : null,
  });

describe('session call errors', () => {
  test('the stored values of provider classes and proxy refusals are disjoint and read back exactly', () => {
    for (const r of PROXY_QUOTA_REFUSALS)
      assert.ok(!(PROVIDER_ERROR_CLASSES as readonly string[]).includes(r), r);
    for (const v of [...PROVIDER_ERROR_CLASSES, ...PROXY_QUOTA_REFUSALS])
      assert.equal(sessionCallErrorOf(v), v);
    for (const v of [
      null,
      undefined,
      '',
      'QUOTA_EXCEEDED',
      'quota_exceeded ',
      'app_quota',
      'insufficient_quota',
    ])
      assert.equal(sessionCallErrorOf(v), null, String(v));
    assert.equal(isProxyQuotaRefusal('hard_quota'), false);
    assert.deepEqual(splitSessionCallError('quota_exceeded'), {
      providerError: null,
      proxyRefusal: 'quota_exceeded',
    });
    assert.deepEqual(splitSessionCallError('hard_quota'), {
      providerError: 'hard_quota',
      proxyRefusal: null,
    });
    assert.deepEqual(splitSessionCallError(null), { providerError: null, proxyRefusal: null });
  });
});

describe('runner outcome with a proxy quota refusal', () => {
  test('a failed attempt stays a runner failure whose code is the refusal, mapped to app_quota', () => {
    const expected = {
      quota_exceeded: { class: 'app_quota', reason: 'exceeded' },
      quota_check_failed: { class: 'app_quota', reason: 'check_failed' },
    } as const;
    for (const refusal of PROXY_QUOTA_REFUSALS) {
      const f = { ...failed, proxyRefusal: refusal };
      assert.equal(classifyAttempt(f), 'runner_failure');
      const env = errorEnvelope('runner_failure', f);
      assert.equal(env?.code, refusal);
      assert.equal(env?.proxyRefusal, refusal);
      assert.equal(env?.providerError, undefined);
      assert.ok(env?.message.endsWith(`(the model proxy refused the call: ${refusal})`), env?.message);
      assert.deepEqual(asWorkflow(env), expected[refusal]);
    }
  });

  test('an upstream hard quota still pauses for manual resume; no fact means no quota class', () => {
    const hard = errorEnvelope('runner_failure', { ...failed, providerError: 'hard_quota' });
    assert.equal(hard?.proxyRefusal, undefined);
    assert.deepEqual(asWorkflow(hard), { class: 'hard_quota' });
    const plain = errorEnvelope('runner_failure', { ...failed, proxyRefusal: null });
    assert.equal(plain?.code, undefined);
    assert.equal(plain?.proxyRefusal, undefined);
    assert.deepEqual(asWorkflow(plain), { class: 'runner_failure' });
  });

  test('cancel, timeout and a clean run ignore the fact', () => {
    const f = { ...failed, proxyRefusal: 'quota_exceeded' as const };
    assert.equal(classifyAttempt({ ...f, stoppedFor: 'cancelled' }), 'cancelled');
    assert.equal(classifyAttempt({ ...f, stoppedFor: 'timeout' }), 'timeout');
    assert.equal(errorEnvelope('timeout', f)?.code, undefined);
    assert.equal(
      classifyAttempt({ ...f, exitCode: 0, turnEnded: true, producedOutput: true }),
      'ok',
      'a refused call the CLI recovered from is not a failure',
    );
  });
});
