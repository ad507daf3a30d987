// The password policy on the change form (web/src/auth/password-policy.ts): the hint in words and the
// checks made before asking the API, with the API's own messages (domain/password-policy.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { passwordPolicy, passwordProblem } from '../../domain/password-policy.ts';
import { newPasswordProblem, policyHint } from '../../web/src/auth/password-policy.ts';

const policy = passwordPolicy(12);

test('the hint says the limits the API states', () => {
  assert.equal(policyHint(policy), 'At least 12 characters, at most 128, not your username.');
  assert.equal(
    policyHint({ ...policy, min_length: 8, must_differ_from_username: false }),
    'At least 8 characters, at most 128.',
  );
});

test('a mismatch is said first; otherwise the API’s own message for the same password', () => {
  assert.equal(newPasswordProblem(policy, 'alice', 'old', 'a', 'b'), 'The new passwords do not match');
  for (const pw of ['short', 'x'.repeat(129), 'Alice-the-user'.slice(0, 5), 'ALICEALICEALICE']) {
    assert.equal(
      newPasswordProblem(policy, 'alice', 'old', pw, pw),
      passwordProblem(policy, 'alice', pw),
      pw,
    );
  }
  const longName = 'a-rather-long-username';
  assert.equal(
    newPasswordProblem(policy, longName, 'old', longName.toUpperCase(), longName.toUpperCase()),
    'Password must not be the same as the username',
  );
  assert.equal(
    newPasswordProblem(policy, 'alice', 'old-password-1', 'a-good-password!', 'a-good-password!'),
    null,
  );
});

test('the same password as the current one is refused before asking; without a policy only the repeat is checked', () => {
  assert.equal(
    newPasswordProblem(policy, 'alice', 'same-password-123', 'same-password-123', 'same-password-123'),
    'New password must differ from the current password',
  );
  assert.equal(newPasswordProblem(null, 'alice', 'x', 'y', 'y'), null);
});
