// The only SQL of workflow_milestones (migrations 0005, 0023; spec document 2, "Autonomous workflow
// records"): the audit record of a workflow. Rules kept here:
//   - `add` gives the next sequence of the workflow (1, 2, 3...) inside a transaction that locks the
//     workflow row on PostgreSQL (SQLite transactions are serialised), backed by the unique
//     (workflow_id, sequence) index;
//   - `begin` is `add` made idempotent for activities (migration 0029): the workflow names the step
//     (`step_key`, unique per workflow); a second call with the same key, e.g. the activity retried
//     after a worker died between the insert and the completion, returns the row the first call wrote
//     instead of adding one. It also marks earlier attempts of the same kind interrupted, in the same
//     transaction, so the new row and the stale ones never disagree;
//   - a milestone is finalized on the same row, once: only an `in_progress` row becomes completed or
//     failed (`finalize` returns false otherwise);
//   - when attempt N of a step starts, rows of the same kind from earlier attempts that are still
//     in_progress become `interrupted` (`markStaleInterrupted`);
//   - cancelling a round marks every row after the target milestone `is_cancelled` (and an in_progress
//     one `cancelled`);
//   - a fork's copied history carries no step keys (NULL), so the fork's own steps may reuse them;
//   - usage is incremental per milestone (phase_* fields); the workflow's totals are recomputed as the
//     SUM of all its milestones' increments (failed, interrupted and cancelled attempts included: their
//     tokens were spent) and written to the workflow row (`recomputeTotals`), never taken from
//     cumulative session totals.
import { and, asc, eq, gt, lt, sql } from 'drizzle-orm';
import type {
  MilestoneKind,
  MilestoneStatus,
  UsageIncrement,
} from '../../../domain/autonomous/milestones.ts';
import type { Phase } from '../../../domain/autonomous/states.ts';
import type { DatabaseHandle } from '../../client.ts';
import { isUniqueViolation } from '../../unique-violation.ts';

type Tables = DatabaseHandle['t'];
type Db = DatabaseHandle['db'];
type TxHandle = Parameters<Parameters<DatabaseHandle['transaction']>[0]>[0];
export type MilestoneRow = Tables['workflowMilestones']['$inferSelect'];

export interface NewMilestone {
  kind: MilestoneKind;
  phase: Phase;
  title?: string | null;
  sessionLine?: string | null;
  sessionId?: string | null;
  content?: string | null;
  attempt?: number;
  /** Default in_progress; a feedback milestone is written `completed` at once. */
  status?: MilestoneStatus;
}

export interface MilestoneResult {
  status: 'completed' | 'failed';
  content?: string | null;
  commitSha?: string | null;
  diffAdditions?: number;
  diffDeletions?: number;
  diffFiles?: number;
  error?: string | null;
  /** The structured outcome of the step's run (domain/autonomous/milestones.ts MILESTONE_OUTCOMES). */
  outcome?: string | null;
  /** Usage of the step not yet added with addUsage. */
  usage?: UsageIncrement;
}

export interface WorkflowTotals {
  totalTokens: number;
  inputTokens: number;
  outputTokens: number;
  requestCount: number;
}

export function milestonesRepository(database: DatabaseHandle) {
  const { db, t, dialect } = database;
  const m = t.workflowMilestones;
  const w = t.autonomousWorkflows;

  const usageSet = (u: UsageIncrement) => ({
    phaseTotalTokens: sql`${m.phaseTotalTokens} + ${u.totalTokens}`,
    phaseInputTokens: sql`${m.phaseInputTokens} + ${u.inputTokens}`,
    phaseOutputTokens: sql`${m.phaseOutputTokens} + ${u.outputTokens}`,
    phaseRequestCount: sql`${m.phaseRequestCount} + ${u.requestCount}`,
  });

  /** PostgreSQL: concurrent appends to one workflow queue on its row (SQLite: transactions are serial). */
  const lockWorkflow = async (tx: TxHandle, workflowId: string): Promise<void> => {
    if (dialect === 'postgres')
      await tx.sql.query('SELECT id FROM autonomous_workflows WHERE workflow_id = ? FOR UPDATE', [
        workflowId,
      ]);
  };

  const byStepKey = async (q: Db, workflowId: string, stepKey: string): Promise<MilestoneRow | undefined> => {
    const [row] = await q
      .select()
      .from(m)
      .where(and(eq(m.workflowId, workflowId), eq(m.stepKey, stepKey)));
    return row;
  };

  /** The next sequence's row; the caller holds the workflow's lock (lockWorkflow) in a transaction. */
  const insertNext = async (
    q: Db,
    workflowId: string,
    v: NewMilestone,
    stepKey: string | null,
    now: Date,
  ): Promise<MilestoneRow> => {
    const [last] = await q
      .select({ n: sql<number | string | null>`MAX(${m.sequence})` })
      .from(m)
      .where(eq(m.workflowId, workflowId));
    const sequence = Number(last?.n ?? 0) + 1;
    const status = v.status ?? 'in_progress';
    const [row] = await q
      .insert(m)
      .values({
        workflowId,
        sequence,
        kind: v.kind,
        phase: v.phase,
        title: v.title ?? null,
        sessionLine: v.sessionLine ?? null,
        sessionId: v.sessionId ?? null,
        content: v.content ?? null,
        attempt: v.attempt ?? 1,
        status,
        stepKey,
        startedAt: now,
        createdAt: now,
        updatedAt: now,
        finishedAt: status === 'in_progress' ? null : now,
      })
      .returning();
    return row!;
  };

  const interruptStale = async (
    q: Db,
    workflowId: string,
    kind: MilestoneKind,
    currentAttempt: number,
    now: Date,
  ): Promise<number> => {
    const rows = await q
      .update(m)
      .set({ status: 'interrupted', liveActivity: null, finishedAt: now, updatedAt: now })
      .where(
        and(
          eq(m.workflowId, workflowId),
          eq(m.kind, kind),
          lt(m.attempt, currentAttempt),
          eq(m.status, 'in_progress'),
        ),
      )
      .returning({ id: m.id });
    return rows.length;
  };

  const find = async (workflowId: string, milestoneId: number): Promise<MilestoneRow | undefined> => {
    const [row] = await db
      .select()
      .from(m)
      .where(and(eq(m.workflowId, workflowId), eq(m.id, milestoneId)));
    return row;
  };

  return {
    find,

    async list(workflowId: string): Promise<MilestoneRow[]> {
      return db.select().from(m).where(eq(m.workflowId, workflowId)).orderBy(asc(m.sequence), asc(m.id));
    },

    /** Appends a milestone with the workflow's next sequence. */
    async add(workflowId: string, v: NewMilestone, now: Date = new Date()): Promise<MilestoneRow> {
      return database.transaction(async (tx) => {
        await lockWorkflow(tx, workflowId);
        return insertNext(tx.db, workflowId, v, null, now);
      });
    },

    /**
     * Idempotent start of a step: the row with (workflow_id, step_key) if one exists, else what `add`
     * does (next sequence, in_progress unless `v.status` says otherwise) with the key stored, after
     * marking earlier in_progress attempts of the same kind interrupted (attempt below `v.attempt`).
     * Concurrent calls with one key serialise on the workflow row (PostgreSQL) or the write lock
     * (SQLite); the unique index backs it, and a call that loses to it returns the winner's row.
     */
    async begin(
      workflowId: string,
      v: NewMilestone & { stepKey: string },
      now: Date = new Date(),
    ): Promise<MilestoneRow> {
      try {
        return await database.transaction(async (tx) => {
          await lockWorkflow(tx, workflowId);
          const existing = await byStepKey(tx.db, workflowId, v.stepKey);
          if (existing) return existing;
          await interruptStale(tx.db, workflowId, v.kind, v.attempt ?? 1, now);
          return insertNext(tx.db, workflowId, v, v.stepKey, now);
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        const existing = await byStepKey(db, workflowId, v.stepKey);
        if (!existing) throw err;
        return existing;
      }
    },

    /** Adds live usage to an in_progress milestone (the running verification row, for instance). */
    async addUsage(milestoneId: number, u: UsageIncrement, now: Date = new Date()): Promise<boolean> {
      const rows = await db
        .update(m)
        .set({ ...usageSet(u), updatedAt: now })
        .where(and(eq(m.id, milestoneId), eq(m.status, 'in_progress')))
        .returning({ id: m.id });
      return rows.length > 0;
    },

    /** Live activity text of an in_progress row. */
    async setLiveActivity(
      milestoneId: number,
      text: string | null,
      now: Date = new Date(),
    ): Promise<boolean> {
      const rows = await db
        .update(m)
        .set({ liveActivity: text, updatedAt: now })
        .where(and(eq(m.id, milestoneId), eq(m.status, 'in_progress')))
        .returning({ id: m.id });
      return rows.length > 0;
    },

    /** Finalizes the same row: in_progress -> completed | failed. False if it was not in_progress. */
    async finalize(milestoneId: number, r: MilestoneResult, now: Date = new Date()): Promise<boolean> {
      const rows = await db
        .update(m)
        .set({
          status: r.status,
          ...(r.content !== undefined ? { content: r.content } : {}),
          ...(r.commitSha !== undefined ? { commitSha: r.commitSha } : {}),
          ...(r.diffAdditions !== undefined ? { diffAdditions: r.diffAdditions } : {}),
          ...(r.diffDeletions !== undefined ? { diffDeletions: r.diffDeletions } : {}),
          ...(r.diffFiles !== undefined ? { diffFiles: r.diffFiles } : {}),
          ...(r.error !== undefined ? { error: r.error } : {}),
          ...(r.outcome !== undefined ? { outcome: r.outcome } : {}),
          ...(r.usage ? usageSet(r.usage) : {}),
          liveActivity: null,
          finishedAt: now,
          updatedAt: now,
        })
        .where(and(eq(m.id, milestoneId), eq(m.status, 'in_progress')))
        .returning({ id: m.id });
      return rows.length > 0;
    },

    /** Earlier attempts of `kind` still in_progress become interrupted; returns how many. */
    async markStaleInterrupted(
      workflowId: string,
      kind: MilestoneKind,
      currentAttempt: number,
      now: Date = new Date(),
    ): Promise<number> {
      return interruptStale(db, workflowId, kind, currentAttempt, now);
    },

    /**
     * Cancels the steps after milestone `milestoneId` (cancel-round): later rows are flagged
     * is_cancelled, and an in_progress one becomes cancelled. Returns the ids flagged; undefined when
     * the milestone is not one of the workflow's.
     */
    async cancelAfter(
      workflowId: string,
      milestoneId: number,
      now: Date = new Date(),
    ): Promise<number[] | undefined> {
      const target = await find(workflowId, milestoneId);
      if (!target || target.sequence == null) return undefined;
      const after = and(eq(m.workflowId, workflowId), gt(m.sequence, target.sequence));
      return database.transaction(async (tx) => {
        await tx.db
          .update(m)
          .set({ status: 'cancelled', liveActivity: null, finishedAt: now, updatedAt: now })
          .where(and(after, eq(m.status, 'in_progress')));
        const rows = await tx.db
          .update(m)
          .set({ isCancelled: true, updatedAt: now })
          .where(after)
          .returning({ id: m.id });
        return rows.map((r) => r.id).sort((a, b) => a - b);
      });
    },

    /** SUM of the milestones' increments, written to the workflow row; returns the totals. */
    async recomputeTotals(workflowId: string, now: Date = new Date()): Promise<WorkflowTotals> {
      const [sum] = await db
        .select({
          total: sql<number | string | null>`COALESCE(SUM(${m.phaseTotalTokens}), 0)`,
          input: sql<number | string | null>`COALESCE(SUM(${m.phaseInputTokens}), 0)`,
          output: sql<number | string | null>`COALESCE(SUM(${m.phaseOutputTokens}), 0)`,
          requests: sql<number | string | null>`COALESCE(SUM(${m.phaseRequestCount}), 0)`,
        })
        .from(m)
        .where(eq(m.workflowId, workflowId));
      const totals: WorkflowTotals = {
        totalTokens: Number(sum?.total ?? 0),
        inputTokens: Number(sum?.input ?? 0),
        outputTokens: Number(sum?.output ?? 0),
        requestCount: Number(sum?.requests ?? 0),
      };
      await db
        .update(w)
        .set({
          totalTokens: totals.totalTokens,
          inputTokens: totals.inputTokens,
          outputTokens: totals.outputTokens,
          requestCount: totals.requestCount,
          updatedAt: now,
        })
        .where(eq(w.workflowId, workflowId));
      return totals;
    },

    /**
     * Fork: copies the milestones up to and including `milestoneId` into `toWorkflowId` (same sequence,
     * same usage, so the fork's totals include the history it starts from; no step keys, so the fork's
     * own steps may use the same keys). Returns how many.
     */
    async copyHistory(fromWorkflowId: string, milestoneId: number, toWorkflowId: string): Promise<number> {
      const target = await find(fromWorkflowId, milestoneId);
      if (!target || target.sequence == null) return 0;
      return database.transaction(async (tx) => {
        const rows = await tx.db
          .select()
          .from(m)
          .where(and(eq(m.workflowId, fromWorkflowId), sql`${m.sequence} <= ${target.sequence}`))
          .orderBy(asc(m.sequence));
        if (rows.length === 0) return 0;
        await tx.db
          .insert(m)
          .values(rows.map(({ id: _id, ...r }) => ({ ...r, workflowId: toWorkflowId, stepKey: null })));
        return rows.length;
      });
    },
  };
}

export type MilestonesRepository = ReturnType<typeof milestonesRepository>;
