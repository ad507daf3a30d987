// The GitHub forge's pure mappings: check-run status/conclusion and commit-status state to check
// evidence, the aggregate CI status, and secret redaction (the token and its Basic/base64 forms).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redact } from '../../services/forge/github/api-errors.ts';
import {
  aggregateStatus,
  checkRunState,
  commitStatusState,
  type GitHubCheck,
} from '../../services/forge/github/github-checks.ts';

test('check runs: not completed is pending; conclusions map to evidence states', () => {
  for (const s of ['queued', 'in_progress', 'waiting', 'requested', 'pending'])
    assert.equal(checkRunState(s, null), 'pending');
  const cases: Array<[string | null, string]> = [
    ['success', 'passed'],
    ['neutral', 'passed'],
    ['skipped', 'skipped'],
    ['cancelled', 'cancelled'],
    ['stale', 'pending'],
    ['failure', 'failed'],
    ['timed_out', 'failed'],
    ['action_required', 'failed'],
    ['startup_failure', 'failed'],
    [null, 'failed'],
  ];
  for (const [c, want] of cases) assert.equal(checkRunState('completed', c), want, String(c));
  assert.equal(commitStatusState('success'), 'passed');
  assert.equal(commitStatusState('pending'), 'pending');
  assert.equal(commitStatusState('failure'), 'failed');
  assert.equal(commitStatusState('error'), 'failed');
});

test('aggregate: failed > pending > cancelled > passed', () => {
  const c = (state: GitHubCheck['state']): GitHubCheck => ({
    id: 1,
    name: state,
    state,
    app: null,
    output: '',
    startedAt: null,
    completedAt: null,
  });
  assert.equal(aggregateStatus([c('passed'), c('pending'), c('failed')]), 'failed');
  assert.equal(aggregateStatus([c('passed'), c('cancelled'), c('pending')]), 'running');
  assert.equal(aggregateStatus([c('passed'), c('cancelled')]), 'cancelled');
  assert.equal(aggregateStatus([c('passed'), c('skipped')]), 'passed');
});

test('redact: the token, its x-access-token Basic form and its base64 form', () => {
  const t = 'ghp_secretTOKEN123';
  const basic = Buffer.from(`x-access-token:${t}`).toString('base64');
  const b64 = Buffer.from(t).toString('base64');
  const out = redact(`a ${t} b Authorization: Basic ${basic} c ${b64} d`, [t]);
  assert.equal(out, 'a [redacted] b Authorization: Basic [redacted] c [redacted] d');
  assert.equal(redact('nothing here', [t]), 'nothing here');
  assert.equal(redact('abc', ['']), 'abc', 'an empty secret redacts nothing');
});
