// Registered machines. The agent token is stored only as its SHA-256 (agent_token_hash).
import { and, asc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export type RemoteMachineRow = DatabaseHandle['t']['remoteMachines']['$inferSelect'];

export function remoteMachinesRepository({ db, t, dialect }: DatabaseHandle) {
  const m = t.remoteMachines;
  // Built and prepared once: every agent request looks its machine up (the token check), with 1,000
  // idle agents about 57 times a second (bench/remote --agents).
  const prepareFind = () =>
    db
      .select()
      .from(m)
      .where(eq(m.machineId, sql.placeholder('machineId')))
      .prepare('remote_machines_find');
  let findStatement: ReturnType<typeof prepareFind> | undefined;
  // The heartbeat write, prepared once for the same reason (an idle agent's every request that finds
  // its stored heartbeat a second old). A fact the request did not carry keeps its stored value.
  const prepareHeartbeat = () =>
    db
      .update(m)
      .set({
        lastHeartbeat: sql`${sql.param(sql.placeholder('at'), m.lastHeartbeat)}`,
        status: 'online',
        agentVersion: sql`COALESCE(${sql.placeholder('agentVersion')}, ${m.agentVersion})`,
        ipAddress: sql`COALESCE(${sql.placeholder('ipAddress')}, ${m.ipAddress})`,
      })
      .where(eq(m.machineId, sql.placeholder('machineId')))
      .prepare('remote_machines_heartbeat');
  let heartbeatStatement: ReturnType<typeof prepareHeartbeat> | undefined;
  return {
    async find(machineId: string): Promise<RemoteMachineRow | undefined> {
      findStatement ??= prepareFind();
      const [row] = (await findStatement.execute({ machineId })) as RemoteMachineRow[];
      return row;
    },
    async insert(values: typeof m.$inferInsert): Promise<RemoteMachineRow> {
      const [row] = await db.insert(m).values(values).returning();
      return row!;
    },
    /** Re-registration of a known machine id: new agent token and fresh host facts. */
    async replaceRegistration(
      machineId: string,
      values: Partial<typeof m.$inferInsert>,
    ): Promise<RemoteMachineRow> {
      const [row] = await db.update(m).set(values).where(eq(m.machineId, machineId)).returning();
      return row!;
    },
    async listAll(): Promise<RemoteMachineRow[]> {
      return db.select().from(m).orderBy(asc(m.machineName), asc(m.id));
    },
    async listByIds(machineIds: string[]): Promise<RemoteMachineRow[]> {
      if (!machineIds.length) return [];
      return db
        .select()
        .from(m)
        .where(inArray(m.machineId, machineIds))
        .orderBy(asc(m.machineName), asc(m.id));
    },
    /** A poll or heartbeat: the machine is online as of `at`. */
    async recordHeartbeat(
      machineId: string,
      at: Date,
      facts: { agentVersion?: string; ipAddress?: string | null },
    ) {
      heartbeatStatement ??= prepareHeartbeat();
      await heartbeatStatement.execute({
        machineId,
        at,
        agentVersion: facts.agentVersion ? facts.agentVersion.slice(0, 50) : null,
        ipAddress: facts.ipAddress ? facts.ipAddress.slice(0, 64) : null,
      });
    },
    /**
     * Heartbeats written behind (services/remote-heartbeats.ts): one statement for the chunk, each
     * machine's own time, never moving a stored heartbeat back, only on machines still `online`.
     */
    async recordHeartbeatsBehind(entries: [machineId: string, at: Date][]): Promise<void> {
      if (!entries.length) return;
      const at = sql`CASE ${m.machineId} ${sql.join(
        entries.map(([id, when]) => {
          const value = sql.param(when, m.lastHeartbeat);
          // PostgreSQL cannot infer a parameter's type inside CASE (it would be text).
          return sql`WHEN ${id} THEN ${dialect === 'postgres' ? sql`CAST(${value} AS timestamptz)` : value}`;
        }),
        sql` `,
      )} END`;
      await db
        .update(m)
        .set({ lastHeartbeat: at })
        .where(
          and(
            inArray(
              m.machineId,
              entries.map(([id]) => id),
            ),
            eq(m.status, 'online'),
            or(isNull(m.lastHeartbeat), sql`${m.lastHeartbeat} < ${at}`),
          ),
        );
    },
    /**
     * Writes `offline` back for machines whose last heartbeat is older than `cutoff`. The condition is
     * re-checked in the statement, so a heartbeat that lands meanwhile is never overwritten.
     */
    async markOffline(machineIds: string[], cutoff: Date): Promise<void> {
      if (!machineIds.length) return;
      await db
        .update(m)
        .set({ status: 'offline' })
        .where(
          and(
            inArray(m.machineId, machineIds),
            eq(m.status, 'online'),
            or(isNull(m.lastHeartbeat), lt(m.lastHeartbeat, cutoff)),
          ),
        );
    },
    async delete(machineId: string): Promise<boolean> {
      const rows = await db.delete(m).where(eq(m.machineId, machineId)).returning({ id: m.id });
      return rows.length > 0;
    },
  };
}
