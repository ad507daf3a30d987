// Login lockout rules, pure. Failures are counted per username; reaching `maxAttempts` locks the name
// for `lockoutMinutes`. While locked every login answers 429, with a right password too. A count whose
// lock has ended, or whose last failure is older than the lockout window, starts again.

export interface LockoutPolicy {
  maxAttempts: number;
  lockoutMinutes: number;
}

export interface AttemptState {
  attemptCount: number;
  lockedUntil: Date | null;
  lastAttemptAt: Date | null;
}

export const lockedUntil = (state: AttemptState | undefined, now: Date): Date | null =>
  state?.lockedUntil && state.lockedUntil.getTime() > now.getTime() ? state.lockedUntil : null;

/**
 * Failures before this instant no longer add to the count. The repository applies the whole restart
 * rule inside its single counting statement: the count starts again when the stored lock has ended or
 * the last failure is older than this.
 */
export const countWindowStart = (now: Date, policy: LockoutPolicy) =>
  new Date(now.getTime() - policy.lockoutMinutes * 60_000);

/** After a failure brought the count to `count`: the lock to set, if any. */
export const lockAfterFailure = (count: number, now: Date, policy: LockoutPolicy): Date | null =>
  count >= policy.maxAttempts ? new Date(now.getTime() + policy.lockoutMinutes * 60_000) : null;

/** Whole seconds until the lock ends (for Retry-After). */
export const secondsUntil = (until: Date, now: Date) =>
  Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
