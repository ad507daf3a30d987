// The only SQL for `login_attempts`: failed logins counted per username (known or not).
import { eq, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function loginAttemptsRepository({ db, t }: DatabaseHandle) {
  const a = t.loginAttempts;
  return {
    async find(username: string) {
      const [row] = await db.select().from(a).where(eq(a.username, username));
      return row;
    },
    /**
     * Counts one failure atomically. When the stored window has ended (`restart`), the count starts
     * again at 1. Returns the new count.
     */
    async recordFailure(username: string, at: Date, restart: boolean): Promise<number> {
      const [row] = await db
        .insert(a)
        .values({ username, attemptCount: 1, lastAttemptAt: at, lockedUntil: null })
        .onConflictDoUpdate({
          target: a.username,
          set: restart
            ? { attemptCount: 1, lockedUntil: null, lastAttemptAt: at }
            : { attemptCount: sql`${a.attemptCount} + 1`, lastAttemptAt: at },
        })
        .returning({ n: a.attemptCount });
      return row!.n;
    },
    async lock(username: string, until: Date): Promise<void> {
      await db.update(a).set({ lockedUntil: until }).where(eq(a.username, username));
    },
    async clear(username: string): Promise<void> {
      await db.delete(a).where(eq(a.username, username));
    },
  };
}
