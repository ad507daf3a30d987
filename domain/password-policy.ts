// The password policy, pure: minimum length (security setting `password_min_length`, default 12), a
// maximum, and never equal to the username. Enforced on user creation, admin reset and change.

export interface PasswordPolicy {
  min_length: number;
  max_length: number;
  must_differ_from_username: true;
}

/** bcrypt reads at most 72 bytes; longer input is accepted but bounded to keep hashing cheap. */
export const PASSWORD_MAX_LENGTH = 128;

export const passwordPolicy = (minLength: number): PasswordPolicy => ({
  min_length: minLength,
  max_length: PASSWORD_MAX_LENGTH,
  must_differ_from_username: true,
});

/** The reason a password is refused, or null when it satisfies the policy. */
export function passwordProblem(policy: PasswordPolicy, username: string, password: string): string | null {
  if (password.length < policy.min_length)
    return `Password must be at least ${policy.min_length} characters long`;
  if (password.length > policy.max_length)
    return `Password must be at most ${policy.max_length} characters long`;
  if (password.toLowerCase() === username.toLowerCase())
    return 'Password must not be the same as the username';
  return null;
}
