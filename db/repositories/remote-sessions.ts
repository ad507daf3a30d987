// Remote sessions: agent_sessions rows with workspace_type = 'remote'.
import { and, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export type RemoteSessionRow = DatabaseHandle['t']['agentSessions']['$inferSelect'];

export function remoteSessionsRepository({ db, t }: DatabaseHandle) {
  const s = t.agentSessions;
  const remote = eq(s.workspaceType, 'remote');
  return {
    async find(sessionId: string): Promise<RemoteSessionRow | undefined> {
      const [row] = await db
        .select()
        .from(s)
        .where(and(eq(s.sessionId, sessionId), remote));
      return row;
    },
    /** Creates the row; a second call with the same session id (activity retry) leaves the first. */
    async insertIfAbsent(values: typeof s.$inferInsert): Promise<void> {
      try {
        await db.insert(s).values({ ...values, workspaceType: 'remote' });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
    },
    async update(sessionId: string, values: Partial<typeof s.$inferInsert>): Promise<void> {
      await db
        .update(s)
        .set(values)
        .where(and(eq(s.sessionId, sessionId), remote));
    },
    async countMessage(sessionId: string, at: Date): Promise<void> {
      await db
        .update(s)
        .set({ messageCount: sql`${s.messageCount} + 1`, updatedAt: at })
        .where(and(eq(s.sessionId, sessionId), remote));
    },
    async insertMessage(values: typeof t.sessionMessages.$inferInsert): Promise<void> {
      await db.insert(t.sessionMessages).values(values);
    },
    /** Live sessions bound to a machine (used when the machine is unregistered). */
    async listLiveOnMachine(machineId: string): Promise<RemoteSessionRow[]> {
      return db
        .select()
        .from(s)
        .where(and(remote, eq(s.remoteMachineId, machineId), inArray(s.status, ['active', 'paused'])));
    },
    /** Sessions a caller may list: all, or own plus those on the given machines. */
    async listVisible(
      scope: { all: true } | { userId: number; machineIds: string[] },
      limit: number,
    ): Promise<RemoteSessionRow[]> {
      const where =
        'all' in scope
          ? remote
          : and(
              remote,
              scope.machineIds.length
                ? or(eq(s.userId, scope.userId), inArray(s.remoteMachineId, scope.machineIds))
                : eq(s.userId, scope.userId),
            );
      return db.select().from(s).where(where).orderBy(desc(s.id)).limit(limit);
    },
  };
}
