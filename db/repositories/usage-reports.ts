// The only SQL for `usage_reports`: agent-reported usage, de-duplicated by report id, plus what the
// report endpoint needs to judge a report: the reporting session's standing and its recent report count.
import { and, count, eq, gt, isNotNull, lte, min, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export interface ReportingSession {
  workspaceType: string;
  status: string;
  machineId: string | null;
  /** The session is bound to the current registration (machine_key) of its machine. */
  machineCurrent: boolean;
  /** The agent has claimed at least one command of the session (its CLI was started there). */
  started: boolean;
  /** Whom the session's usage is charged to, and where it happened. */
  userId: number | null;
  tenantId: number;
  toolName: string;
  hostName: string;
}

export function usageReportsRepository({ db, t }: DatabaseHandle) {
  const r = t.usageReports;
  return {
    /** Inserts the report unless its report_id is already stored; its row id when it was new. */
    async insertOnce(values: typeof r.$inferInsert): Promise<number | undefined> {
      const rows = await db
        .insert(r)
        .values(values)
        .onConflictDoNothing({ target: r.reportId })
        .returning({ id: r.id });
      return rows[0]?.id;
    },
    async delete(id: number): Promise<void> {
      await db.delete(r).where(eq(r.id, id));
    },
    /**
     * Reports of the session received after `since` up to and including row `uptoId`, and the oldest
     * one's time. Counting only rows up to one's own id makes concurrent reports (on any instance)
     * agree on who is over the limit.
     */
    async recentCount(sessionId: string, since: Date, uptoId: number) {
      const [row] = await db
        .select({ n: count(), oldest: min(r.receivedAt) })
        .from(r)
        .where(and(eq(r.sessionId, sessionId), gt(r.receivedAt, since), lte(r.id, uptoId)));
      const oldest = row?.oldest == null ? null : new Date(row.oldest as unknown as string | number | Date);
      return { count: Number(row?.n ?? 0), oldest };
    },
    async reportingSession(sessionId: string): Promise<ReportingSession | undefined> {
      const s = t.agentSessions;
      const m = t.remoteMachines;
      const c = t.remoteRuntimeCommands;
      const [row] = await db
        .select({
          workspaceType: s.workspaceType,
          status: s.status,
          machineId: s.remoteMachineId,
          userId: s.userId,
          tenantId: s.tenantId,
          toolName: s.toolName,
          hostName: s.hostName,
          sessionKey: s.remoteMachineKey,
          machineRow: m.id,
          machineKey: m.machineKey,
          started: sql<unknown>`EXISTS (SELECT 1 FROM ${c} WHERE ${c.sessionId} = ${sessionId} AND ${c.deliveredAt} IS NOT NULL)`,
        })
        .from(s)
        .leftJoin(m, and(eq(m.machineId, s.remoteMachineId), isNotNull(s.remoteMachineId)))
        .where(eq(s.sessionId, sessionId));
      if (!row) return undefined;
      return {
        workspaceType: row.workspaceType,
        status: row.status,
        machineId: row.machineId,
        machineCurrent: row.machineRow != null && (row.machineKey ?? null) === (row.sessionKey ?? null),
        started: row.started === true || row.started === 1 || row.started === '1' || row.started === 't',
        userId: row.userId,
        tenantId: row.tenantId,
        toolName: row.toolName,
        hostName: row.hostName,
      };
    },
  };
}
