// Classification of providers' error responses (domain/proxy/provider-errors.ts) from real-shaped
// bodies, and the runner outcome rules that use the class (services/autonomous/runner/outcome.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  classifyProviderError,
  MAX_CLASSIFIED_BODY,
  readEnvelope,
} from '../../domain/proxy/provider-errors.ts';
import { classifyAttempt, errorEnvelope } from '../../services/autonomous/runner/outcome.ts';

const anthropic = (type: string, message: string) =>
  JSON.stringify({ type: 'error', error: { type, message } });
const openai = (type: string, code: string | null, message = 'x') =>
  JSON.stringify({ error: { message, type, param: null, code } });

describe('provider error classes', () => {
  test('Anthropic', () => {
    const tooLong = anthropic('invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum');
    assert.equal(classifyProviderError(400, tooLong), 'context_overflow');
    assert.equal(classifyProviderError(400, Buffer.from(tooLong)), 'context_overflow');
    // The same prefix with another status or error type is not an overflow.
    assert.equal(classifyProviderError(500, tooLong), 'server_error');
    assert.equal(
      classifyProviderError(400, anthropic('api_error', 'prompt is too long: 1 tokens > 0 maximum')),
      'other',
    );
    // Only the prefix counts: a message that merely mentions it is another invalid request.
    assert.equal(
      classifyProviderError(400, anthropic('invalid_request_error', 'messages: the prompt is too long')),
      'other',
    );
    assert.equal(classifyProviderError(400, anthropic('invalid_request_error', 'max_tokens: bad')), 'other');
    assert.equal(
      classifyProviderError(
        400,
        anthropic('invalid_request_error', 'Your credit balance is too low to access the Anthropic API.'),
      ),
      'hard_quota',
    );
    assert.equal(classifyProviderError(402, anthropic('billing_error', 'billing')), 'hard_quota');
    assert.equal(classifyProviderError(401, anthropic('authentication_error', 'invalid x-api-key')), 'auth');
    assert.equal(classifyProviderError(403, anthropic('permission_error', 'no')), 'auth');
    assert.equal(classifyProviderError(429, anthropic('rate_limit_error', 'slow down')), 'rate_limited');
    assert.equal(classifyProviderError(529, anthropic('overloaded_error', 'Overloaded')), 'overloaded');
    assert.equal(classifyProviderError(500, anthropic('api_error', 'Internal server error')), 'server_error');
  });

  test('OpenAI and compatible', () => {
    assert.equal(
      classifyProviderError(
        400,
        openai(
          'invalid_request_error',
          'context_length_exceeded',
          "This model's maximum context length is 8192 tokens",
        ),
      ),
      'context_overflow',
    );
    assert.equal(
      classifyProviderError(429, openai('insufficient_quota', 'insufficient_quota')),
      'hard_quota',
    );
    assert.equal(classifyProviderError(429, openai('requests', 'rate_limit_exceeded')), 'rate_limited');
    assert.equal(classifyProviderError(401, openai('invalid_request_error', 'invalid_api_key')), 'auth');
    assert.equal(classifyProviderError(503, openai('server_error', null)), 'overloaded');
    assert.equal(classifyProviderError(400, openai('invalid_request_error', null)), 'other');
    // Without the code, the message (which mentions the context length) is not read.
    assert.equal(
      classifyProviderError(
        400,
        openai('invalid_request_error', null, "This model's maximum context length is 8192 tokens"),
      ),
      'other',
    );
  });

  test('Gemini is classified by status only (no documented overflow code)', () => {
    const body = (code: number, status: string, message: string) =>
      JSON.stringify({ error: { code, message, status } });
    assert.equal(
      classifyProviderError(400, body(400, 'INVALID_ARGUMENT', 'The input token count exceeds')),
      'other',
    );
    assert.equal(classifyProviderError(429, body(429, 'RESOURCE_EXHAUSTED', 'quota')), 'rate_limited');
    assert.equal(classifyProviderError(503, body(503, 'UNAVAILABLE', 'overloaded')), 'overloaded');
  });

  test('bodies that are not JSON envelopes, or too large, fall back to the status', () => {
    assert.equal(classifyProviderError(400, ''), 'other');
    assert.equal(classifyProviderError(400, '<html>bad gateway</html>'), 'other');
    assert.equal(classifyProviderError(400, 'null'), 'other');
    assert.equal(classifyProviderError(400, '{"error":"context_length_exceeded"}'), 'other');
    assert.equal(classifyProviderError(400, '{"error":{"code":42}}'), 'other');
    assert.equal(classifyProviderError(429, 'not json'), 'rate_limited');
    const padded = JSON.stringify({
      error: { code: 'context_length_exceeded', message: 'x'.repeat(MAX_CLASSIFIED_BODY) },
    });
    assert.equal(classifyProviderError(400, padded), 'other');
    assert.deepEqual(readEnvelope(padded), { type: '', code: '', message: '' });
  });

  test('linear time on hostile input', () => {
    const hostile = `{"error":{"type":"invalid_request_error","message":"${'prompt is too long'.repeat(3000)}"}}`;
    const started = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) classifyProviderError(400, hostile);
    assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 2000);
  });
});

describe('runner outcome with the proxy fact', () => {
  const base = {
    stoppedFor: null,
    exitCode: 1,
    signal: null,
    turnEnded: false,
    contextOverflow: false,
    producedOutput: false,
  } as const;

  test('a failed attempt with a recorded overflow is a context overflow', () => {
    const f = { ...base, providerError: 'context_overflow' as const };
    assert.equal(classifyAttempt(f), 'context_overflow');
    const env = errorEnvelope('context_overflow', f);
    assert.equal(env?.code, 'context_length_exceeded');
    assert.equal(env?.providerError, 'context_overflow');
  });

  test('a successful attempt ignores the fact; cancel and timeout win', () => {
    const ok = {
      ...base,
      exitCode: 0,
      turnEnded: true,
      producedOutput: true,
      providerError: 'context_overflow' as const,
    };
    assert.equal(classifyAttempt(ok), 'ok');
    assert.equal(
      classifyAttempt({ ...base, stoppedFor: 'timeout', providerError: 'context_overflow' }),
      'timeout',
    );
    assert.equal(
      classifyAttempt({ ...base, spawnError: 'ENOENT', providerError: 'context_overflow' }),
      'runner_failure',
    );
  });

  test('other classes stay runner failures with a structured code', () => {
    const codes = {
      hard_quota: 'insufficient_quota',
      rate_limited: 'rate_limit_exceeded',
      overloaded: 'overloaded_error',
    } as const;
    for (const [cls, code] of Object.entries(codes)) {
      const f = { ...base, providerError: cls as keyof typeof codes };
      assert.equal(classifyAttempt(f), 'runner_failure');
      const env = errorEnvelope('runner_failure', f);
      assert.equal(env?.code, code);
      assert.equal(env?.providerError, cls);
    }
    const auth = errorEnvelope('runner_failure', { ...base, providerError: 'auth' });
    assert.equal(auth?.code, undefined);
    assert.equal(auth?.providerError, 'auth');
    assert.equal(errorEnvelope('runner_failure', base)?.providerError, undefined);
  });
});
