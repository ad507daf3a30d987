// The only SQL for `login_attempts`: failed logins counted per username (known or not).
import { eq, sql } from 'drizzle-orm';
import { countWindowStart, type LockoutPolicy, lockAfterFailure } from '../../domain/login-lockout.ts';
import type { DatabaseHandle } from '../client.ts';

/**
 * A reserved attempt: counted before the password is compared, so a burst of concurrent guesses
 * cannot all be compared before the lock applies. `lockedUntil` is set when this attempt's count
 * reached the limit (the name is locked unless this very attempt turns out right). `reserved: false`:
 * the name was already locked, nothing was counted, and the password must not be compared.
 */
export type AttemptReservation =
  | { reserved: true; count: number; lockedUntil: Date | null }
  | { reserved: false; lockedUntil: Date };

export function loginAttemptsRepository({ db, t }: DatabaseHandle) {
  const a = t.loginAttempts;
  return {
    async find(username: string) {
      const [row] = await db.select().from(a).where(eq(a.username, username));
      return row;
    },
    /**
     * Reserves one attempt (counted as a failure until `clear` says it was right) and takes the lock
     * decision in ONE statement, from the incremented value, so concurrent attempts can neither
     * overwrite each other's count nor all miss the threshold. A name locked at write time is not
     * updated (the conditional DO UPDATE returns no row): the attempt is refused before any password
     * is compared, on both databases. The count starts again at 1 when the stored lock has ended or the
     * last failure is older than the lockout window (the rule of domain/login-lockout.ts, evaluated
     * against the row as it is at write time).
     */
    async reserveAttempt(username: string, at: Date, policy: LockoutPolicy): Promise<AttemptReservation> {
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
          setWhere: sql`(${a.lockedUntil} IS NULL OR ${a.lockedUntil} <= ${p(at)})`,
        })
        .returning({ count: a.attemptCount, lockedUntil: a.lockedUntil });
      if (row) return { reserved: true, count: row.count, lockedUntil: row.lockedUntil };
      // Locked: read the lock for Retry-After (a success may have cleared it in between).
      const held = await this.find(username);
      return { reserved: false, lockedUntil: held?.lockedUntil ?? lockUntil };
    },
    async clear(username: string): Promise<void> {
      await db.delete(a).where(eq(a.username, username));
    },
  };
}
