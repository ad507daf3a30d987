// The persisted agent command queue (remote_runtime_commands): pending -> delivered -> responded.
// Claiming is one atomic statement: PostgreSQL locks the chosen rows with FOR UPDATE SKIP LOCKED, so
// concurrent polls on any number of API instances never claim the same command; SQLite runs the single
// UPDATE ... RETURNING under its database write lock.
//
// Every command carries the machine_key of the machine generation it is meant for: the key its session
// was bound to, or (no session) the machine's key at queueing time. A poll claims only commands whose key
// is the machine's current one, so a machine deleted and registered again under the same machine_id
// never receives the commands (prompts, proxy tokens) queued for its predecessor.
//
// Delivery lease: a claimed command stays `delivered` until the agent's response. An API killed between
// committing a claim and writing the poll's answer leaves commands `delivered` that no agent received, so
// a `delivered` command without a response is claimable again once its delivery is older than the lease
// (`redeliverBefore`); the agent ignores a command_id it has already handled. To keep a session's order,
// a pending command waits while an earlier command of its session is delivered within the lease; an
// earlier one whose lease ran out is claimed again in the same batch, ahead of it.
import { and, asc, eq, gt, inArray, isNull, lte, or, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export type RuntimeCommandRow = DatabaseHandle['t']['remoteRuntimeCommands']['$inferSelect'];

export function runtimeCommandsRepository({ db, t, dialect }: DatabaseHandle) {
  const c = t.remoteRuntimeCommands;
  const m = t.remoteMachines;
  const s = t.agentSessions;
  const currentKey = (machineId: string | SQLWrapper) =>
    sql`(SELECT ${m.machineKey} FROM ${m} WHERE ${m.machineId} = ${machineId})`;
  /** Delivered within the lease by an earlier command of the same session (outer row: `c`). */
  const earlierInFlight = (redeliverBefore: Date | SQLWrapper) =>
    sql`EXISTS (SELECT 1 FROM ${c} AS e WHERE e.machine_id = ${c.machineId} AND e.status = 'delivered'
      AND e.session_id = ${c.sessionId} AND e.id < ${c.id}
      AND e.delivered_at > ${redeliverBefore instanceof Date ? sql.param(redeliverBefore, c.deliveredAt) : redeliverBefore})`;
  /** Claimable now: pending behind no in-flight command of its session, or delivered and unanswered past the lease. */
  const claimable = (redeliverBefore: Date | SQLWrapper) =>
    or(
      and(eq(c.status, 'pending'), sql`NOT ${earlierInFlight(redeliverBefore)}`),
      and(eq(c.status, 'delivered'), lte(c.deliveredAt, redeliverBefore)),
    );
  /** Pending, or delivered and unanswered past the lease. */
  const claimableStatus = (redeliverBefore: Date | SQLWrapper) =>
    or(eq(c.status, 'pending'), and(eq(c.status, 'delivered'), lte(c.deliveredAt, redeliverBefore)));
  const deliverable = (machineId: SQLWrapper, now: SQLWrapper, redeliverBefore: SQLWrapper) =>
    and(
      eq(c.machineId, machineId),
      claimable(redeliverBefore),
      or(isNull(c.expiresAt), gt(c.expiresAt, now)),
      // Null-safe: rows written by a build before 0010 (no keys yet) still match each other.
      sql`COALESCE(${c.machineKey}, '') = COALESCE(${currentKey(machineId)}, '')`,
    );
  /** The generation a new command is for (see the header); computed in the INSERT itself. */
  const keyFor = (values: typeof c.$inferInsert): SQL =>
    values.sessionId
      ? sql`(SELECT ${s.remoteMachineKey} FROM ${s} WHERE ${s.sessionId} = ${values.sessionId})`
      : currentKey(values.machineId);

  /**
   * The claim, built and prepared once: every long poll runs it (an idle agent's every 25 s), and
   * drizzle building it and SQLite preparing it each time was most of a claim's cost (bench/remote
   * --agents). PostgreSQL keeps it as a named prepared statement per connection.
   */
  const prepareClaim = () => {
    const p = {
      machineId: sql.placeholder('machineId'),
      now: sql.param(sql.placeholder('now'), c.deliveredAt),
      expiresAfter: sql.param(sql.placeholder('now'), c.expiresAt),
      redeliverBefore: sql.param(sql.placeholder('redeliverBefore'), c.deliveredAt),
    };
    const base = db
      .select({ id: c.id })
      .from(c)
      .where(deliverable(p.machineId, p.expiresAfter, p.redeliverBefore))
      .orderBy(asc(c.id))
      .limit(sql.placeholder('limit'));
    const chosen = dialect === 'postgres' ? base.for('update', { skipLocked: true }) : base;
    return (
      db
        .update(c)
        .set({ status: 'delivered', deliveredAt: sql`${p.now}` })
        // Re-checked here: a concurrent claim (another instance) may have taken the row meanwhile.
        .where(and(inArray(c.id, chosen), claimableStatus(p.redeliverBefore)))
        .returning()
        .prepare('remote_runtime_commands_claim')
    );
  };
  let claim: ReturnType<typeof prepareClaim> | undefined;

  return {
    async insert(values: typeof c.$inferInsert): Promise<RuntimeCommandRow> {
      const [row] = await db
        .insert(c)
        .values({ ...values, machineKey: keyFor(values) })
        .returning();
      return row!;
    },
    /**
     * Inserts a command with a caller-chosen id; when it already exists and is still pending its payload
     * is replaced (an activity retried after its first attempt queued the command).
     */
    async upsertPending(values: typeof c.$inferInsert): Promise<void> {
      await db
        .insert(c)
        .values({ ...values, machineKey: keyFor(values) })
        .onConflictDoUpdate({
          target: c.commandId,
          set: { payload: values.payload, expiresAt: values.expiresAt },
          where: eq(c.status, 'pending'),
        });
    },
    async find(commandId: string): Promise<RuntimeCommandRow | undefined> {
      const [row] = await db.select().from(c).where(eq(c.commandId, commandId));
      return row;
    },
    /**
     * Which of these machines may have a command to claim (pending, or delivered and unanswered past
     * the lease; not expired): a hint for services/remote-command-sweep.ts, so one statement stands in
     * for a re-check per held long poll. It may answer a machine whose claim then finds nothing (a
     * command of an older generation, or one waiting behind an in-flight one): that poll just waits again.
     */
    async machinesWithClaimable(machineIds: string[], now: Date, redeliverBefore: Date): Promise<string[]> {
      if (!machineIds.length) return [];
      const rows = await db
        .selectDistinct({ machineId: c.machineId })
        .from(c)
        .where(
          and(
            inArray(c.machineId, machineIds),
            claimableStatus(redeliverBefore),
            or(isNull(c.expiresAt), gt(c.expiresAt, now)),
          ),
        );
      return rows.map((r) => r.machineId);
    },
    /** Claims up to `limit` deliverable commands of a machine, oldest first, marking them delivered. */
    async claimPending(
      machineId: string,
      now: Date,
      limit: number,
      redeliverBefore: Date,
    ): Promise<RuntimeCommandRow[]> {
      claim ??= prepareClaim();
      const rows = (await claim.execute({ machineId, now, limit, redeliverBefore })) as RuntimeCommandRow[];
      return rows.sort((x, y) => x.id - y.id);
    },
    /** Puts claimed commands back (the poll that claimed them was gone before it could answer). */
    async release(ids: number[]): Promise<void> {
      if (!ids.length) return;
      await db
        .update(c)
        .set({ status: 'pending', deliveredAt: null })
        .where(and(inArray(c.id, ids), eq(c.status, 'delivered')));
    },
    /** Records the agent's response; only a command of this machine, and only once. */
    async respond(
      machineId: string,
      commandId: string,
      responsePayload: string,
      now: Date,
    ): Promise<boolean> {
      const rows = await db
        .update(c)
        .set({ status: 'responded', responsePayload, respondedAt: now })
        .where(
          and(
            eq(c.commandId, commandId),
            eq(c.machineId, machineId),
            inArray(c.status, ['pending', 'delivered']),
          ),
        )
        .returning({ id: c.id });
      return rows.length > 0;
    },
  };
}
