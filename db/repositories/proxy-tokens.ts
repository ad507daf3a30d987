import { and, eq, isNull } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function proxyTokensRepository({ db, t }: DatabaseHandle) {
  return {
    async record(values: typeof t.proxyTokens.$inferInsert) {
      await db.insert(t.proxyTokens).values(values);
    },
    async find(jti: string) {
      const [row] = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.jti, jti));
      return row;
    },
    /** Revokes every live token of a session; returns how many. */
    async revokeForSession(sessionId: string, reason: string, at: Date): Promise<number> {
      const rows = await db
        .update(t.proxyTokens)
        .set({ revokedAt: at, revokedReason: reason })
        .where(and(eq(t.proxyTokens.sessionId, sessionId), isNull(t.proxyTokens.revokedAt)))
        .returning({ jti: t.proxyTokens.jti });
      return rows.length;
    },
  };
}
