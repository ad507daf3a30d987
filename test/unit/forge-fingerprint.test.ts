// Failure fingerprints (domain/forge/fingerprint.ts): stable across digits (times, pids, run ids),
// different for a different error, the exit code or the check name; forge notes ignored; linear.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorSignature, failureFingerprint, SIGNATURE_LINES } from '../../domain/forge/fingerprint.ts';

test('digits and forge notes do not change the fingerprint; the error, exit code and check name do', () => {
  const a = failureFingerprint('ci', 'run 17 at 12:00:01\nError: expected 3 got 4\n[svc] CI took 3 s\n', 1);
  const b = failureFingerprint('ci', 'run 2018 at 09:13:55\nError: expected 30 got 41\n', 1);
  assert.equal(a, b);
  assert.match(a, /^ci:[0-9a-f]{16}$/);
  assert.notEqual(a, failureFingerprint('ci', 'run 1\nTypeError: x is undefined\n', 1));
  assert.notEqual(a, failureFingerprint('ci', 'run 17 at 12:00:01\nError: expected 3 got 4\n', 2));
  assert.notEqual(a, failureFingerprint('lint', 'run 17 at 12:00:01\nError: expected 3 got 4\n', 1));
  assert.equal(failureFingerprint('ci', null, null), failureFingerprint('ci', '', null));
});

test(`only the last ${SIGNATURE_LINES} non-empty lines count`, () => {
  const tail = Array.from({ length: SIGNATURE_LINES }, (_, i) => `line ${String.fromCharCode(97 + i)}`).join(
    '\n',
  );
  assert.equal(errorSignature(`early noise\n\n${tail}`), errorSignature(`other early noise\n${tail}\n\n`));
  assert.equal(errorSignature(tail).split('\n').length, SIGNATURE_LINES);
});

test('a 64 KiB adversarial log is signed quickly', () => {
  const started = process.hrtime.bigint();
  errorSignature(`${'9'.repeat(32 * 1024)}\n${'a1'.repeat(16 * 1024)}`);
  assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 200);
});
