// Remote sessions: agent_sessions rows with workspace_type = 'remote'.
import { and, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
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
      // Bound to the machine generation current now (remote_machines.machine_key), in the same statement.
      const m = t.remoteMachines;
      const machineKey = sql`(SELECT ${m.machineKey} FROM ${m} WHERE ${m.machineId} = ${values.remoteMachineId ?? null})`;
      try {
        await db.insert(s).values({ ...values, workspaceType: 'remote', remoteMachineKey: machineKey });
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
    /** The first "CLI started" note of the session (later ones, e.g. a restart or the next turn, change nothing). */
    async markCliStarted(sessionId: string, at: Date): Promise<void> {
      await db
        .update(s)
        .set({ cliStartedAt: at })
        .where(and(eq(s.sessionId, sessionId), remote, isNull(s.cliStartedAt)));
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
    /**
     * Live (active or paused) sessions matching every given criterion; `tenantId` matches sessions of
     * the tenant, on its machines, or of its users. At least one criterion is required.
     */
    async listLive(match: {
      machineId?: string;
      userId?: number;
      tenantId?: number;
    }): Promise<RemoteSessionRow[]> {
      const conds = [remote, inArray(s.status, ['active', 'paused'])];
      if (match.machineId !== undefined) conds.push(eq(s.remoteMachineId, match.machineId));
      if (match.userId !== undefined) conds.push(eq(s.userId, match.userId));
      if (match.tenantId !== undefined) {
        const m = t.remoteMachines;
        conds.push(
          or(
            eq(s.tenantId, match.tenantId),
            inArray(
              s.remoteMachineId,
              db.select({ id: m.machineId }).from(m).where(eq(m.tenantId, match.tenantId)),
            ),
            inArray(
              s.userId,
              db.select({ id: t.users.id }).from(t.users).where(eq(t.users.tenantId, match.tenantId)),
            ),
          )!,
        );
      }
      if (conds.length === 2) throw new Error('listLive needs a machine, user or tenant');
      return db
        .select()
        .from(s)
        .where(and(...conds))
        .orderBy(s.id);
    },
    /** Marks a session stopped unless it already ended; true when this call ended it. */
    async markStoppedIfLive(sessionId: string, at: Date): Promise<boolean> {
      const rows = await db
        .update(s)
        .set({ status: 'stopped', completedAt: at, updatedAt: at })
        .where(and(eq(s.sessionId, sessionId), remote, inArray(s.status, ['active', 'paused'])))
        .returning({ id: s.id });
      return rows.length > 0;
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
                ? or(
                    eq(s.userId, scope.userId),
                    // Only sessions of the machines' current generations (not of a deleted predecessor);
                    // rows written by a build before 0010 carry no key and match by machine id.
                    inArray(
                      s.remoteMachineKey,
                      db
                        .select({ k: t.remoteMachines.machineKey })
                        .from(t.remoteMachines)
                        .where(inArray(t.remoteMachines.machineId, scope.machineIds)),
                    ),
                    and(isNull(s.remoteMachineKey), inArray(s.remoteMachineId, scope.machineIds)),
                  )
                : eq(s.userId, scope.userId),
            );
      return db.select().from(s).where(where).orderBy(desc(s.id)).limit(limit);
    },
  };
}
