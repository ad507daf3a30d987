// The only SQL for `login_attempts`: failed logins counted per username (known or not).
import { eq, sql } from 'drizzle-orm';
import { countWindowStart, type LockoutPolicy, lockAfterFailure } from '../../domain/login-lockout.ts';
import type { DatabaseHandle } from '../client.ts';

export interface FailureOutcome {
  count: number;
  /** Set when this failure (or a concurrent one) locked the name. */
  lockedUntil: Date | null;
}

export function loginAttemptsRepository({ db, t }: DatabaseHandle) {
  const a = t.loginAttempts;
  return {
    async find(username: string) {
      const [row] = await db.select().from(a).where(eq(a.username, username));
      return row;
    },
    /**
     * Counts one failure and takes the lock decision in ONE statement, from the incremented value, so
     * concurrent failures can neither overwrite each other's count nor all miss the threshold (the
     * old read-then-write let 40 parallel failures leave the count at 1). The count starts again at 1
     * when the stored lock has ended or the last failure is older than the lockout window (the rule
     * of domain/login-lockout.ts, evaluated against the row as it is at write time).
     */
    async recordFailure(username: string, at: Date, policy: LockoutPolicy): Promise<FailureOutcome> {
      const p = (d: Date) => sql.param(d, a.lastAttemptAt);
      const lockUntil = lockAfterFailure(policy.maxAttempts, at, policy)!;
      const restarts = sql`((${a.lockedUntil} IS NOT NULL AND ${a.lockedUntil} <= ${p(at)}) OR ${a.lastAttemptAt} IS NULL OR ${a.lastAttemptAt} < ${p(countWindowStart(at, policy))})`;
      const next = sql`(CASE WHEN ${restarts} THEN 1 ELSE ${a.attemptCount} + 1 END)`;
      const [row] = await db
        .insert(a)
        .values({
          username,
          attemptCount: 1,
          lastAttemptAt: at,
          lockedUntil: lockAfterFailure(1, at, policy),
        })
        .onConflictDoUpdate({
          target: a.username,
          set: {
            attemptCount: next,
            lastAttemptAt: at,
            lockedUntil: sql`(CASE WHEN ${next} >= ${policy.maxAttempts} THEN ${sql.param(lockUntil, a.lockedUntil)} WHEN ${restarts} THEN NULL ELSE ${a.lockedUntil} END)`,
          },
        })
        .returning({ count: a.attemptCount, lockedUntil: a.lockedUntil });
      return { count: row!.count, lockedUntil: row!.lockedUntil };
    },
    async clear(username: string): Promise<void> {
      await db.delete(a).where(eq(a.username, username));
    },
  };
}
