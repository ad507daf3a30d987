// The password policy as the API states it (GET /api/password-policy), pure
// (test/unit/web-password-policy.test.ts): a sentence for the new-password field's hint, and the same
// checks the API makes, so the form says what is wrong before asking (the API checks again and its
// answer, in words, is what counts).

export interface PasswordPolicy {
  min_length: number;
  max_length: number;
  must_differ_from_username: boolean;
}

export function policyHint(p: PasswordPolicy): string {
  const parts = [`At least ${p.min_length} characters`, `at most ${p.max_length}`];
  if (p.must_differ_from_username) parts.push('not your username');
  return `${parts.join(', ')}.`;
}

/** Why the new password would be refused, or null: the repeat first, then the API's own rules. */
export function newPasswordProblem(
  p: PasswordPolicy | null,
  username: string,
  current: string,
  next: string,
  confirm: string,
): string | null {
  if (next !== confirm) return 'The new passwords do not match';
  if (!p) return null;
  if (next.length < p.min_length) return `Password must be at least ${p.min_length} characters long`;
  if (next.length > p.max_length) return `Password must be at most ${p.max_length} characters long`;
  if (p.must_differ_from_username && next.toLowerCase() === username.toLowerCase())
    return 'Password must not be the same as the username';
  if (current !== '' && next === current) return 'New password must differ from the current password';
  return null;
}
