// The only SQL of autonomous_workflows and autonomous_batches rows as units of work (migrations 0005,
// 0023). Creation of one workflow, or of a batch with all its workflows, is one transaction. Reads are
// scoped by the caller's tenant scope (db/tenant-scope-sql.ts) and, for non-administrators, by owner
// (domain/autonomous/access.ts decides which). Status changes are compare-and-set: `updateStatus`
// writes only while the row still has the status the caller read, and says whether it won, so two
// concurrent controls (pause and stop, the scheduler and a user) cannot both apply. The workflow's
// WorkflowState (domain/autonomous/transitions.ts) maps onto status, current_phase, paused_by,
// previous_status and feedback_return_phase; `stateOf` reads it back.
import { and, asc, count, desc, eq, inArray, type SQL } from 'drizzle-orm';
import {
  isPauseReason,
  isPhase,
  isWorkflowStatus,
  RUNNING_STATUSES,
} from '../../../domain/autonomous/states.ts';
import type { WorkflowState } from '../../../domain/autonomous/transitions.ts';
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import type { DatabaseHandle } from '../../client.ts';
import { scopeCondition } from '../../tenant-scope-sql.ts';

type Tables = DatabaseHandle['t'];
export type WorkflowRow = Tables['autonomousWorkflows']['$inferSelect'];
export type BatchRow = Tables['autonomousBatches']['$inferSelect'];
type WorkflowInsert = Tables['autonomousWorkflows']['$inferInsert'];

/** Whose workflows a read covers: the scope's tenants, and only `ownerId`'s when set. */
export interface WorkflowReader {
  scope: ReadScope;
  ownerId?: number;
}

export interface NewWorkflow {
  workflowId: string;
  tenantId: number | null;
  userId: number;
  title: string | null;
  projectId: number | null;
  projectPath: string;
  cliTool: string;
  model: string | null;
  branchStrategy: string;
  /** JSON from domain/autonomous/create-input.ts buildDefinitionSnapshot. */
  definitionSnapshot: string;
  forkedFromWorkflowId?: string | null;
  forkedFromMilestoneId?: number | null;
}

export interface NewBatch {
  batchId: string;
  tenantId: number | null;
  userId: number;
  projectId: number | null;
  /** In run order; the first is `pending`, the others `queued`. */
  items: NewWorkflow[];
}

/** Columns a caller may set besides the state (branch, worktree, PR, deadlines, contexts, ...). */
export type WorkflowFields = Partial<
  Omit<
    WorkflowInsert,
    'id' | 'workflowId' | 'tenantId' | 'userId' | 'status' | 'createdAt' | 'definitionSnapshot' | 'batchId'
  >
>;

/** The workflow's state for domain/autonomous/transitions.ts. */
export function stateOf(row: WorkflowRow): WorkflowState {
  const returnPhase = row.feedbackReturnPhase;
  if (!isWorkflowStatus(row.status))
    throw new Error(`workflow ${row.workflowId} has unknown status ${row.status}`);
  return {
    status: row.status,
    phase: isPhase(row.currentPhase) ? row.currentPhase : 'preparation',
    pausedBy: isPauseReason(row.pausedBy) ? row.pausedBy : null,
    previousStatus: isWorkflowStatus(row.previousStatus) ? row.previousStatus : null,
    feedbackPhase: isPhase(returnPhase) && returnPhase !== 'wait' ? returnPhase : null,
    inBatch: row.batchId != null,
  };
}

/** `ci_failure_fingerprints` is JSON text: the fingerprints handed to CI repair, oldest first. */
export function parseFingerprints(text: string | null): string[] {
  const v = parseJson(text);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** `ci_diagnostics_state` is JSON text (activities/autonomous/merge-stage.ts CiDiagnosticsState). */
export function parseDiagnosticsState(text: string | null): Record<string, unknown> | null {
  const v = parseJson(text);
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function parseJson(text: string | null): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function workflowsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const w = t.autonomousWorkflows;
  const b = t.autonomousBatches;

  function readable(r: WorkflowReader): SQL | undefined | false {
    const scoped = scopeCondition(r.scope, w.tenantId);
    if (scoped === false) return false;
    return and(scoped, r.ownerId !== undefined ? eq(w.userId, r.ownerId) : undefined);
  }

  const insertValues = (v: NewWorkflow, now: Date, extra: Partial<WorkflowInsert>): WorkflowInsert => ({
    workflowId: v.workflowId,
    tenantId: v.tenantId,
    userId: v.userId,
    title: v.title,
    projectId: v.projectId,
    projectPath: v.projectPath,
    cliTool: v.cliTool,
    model: v.model,
    branchStrategy: v.branchStrategy,
    definitionSnapshot: v.definitionSnapshot,
    forkedFromWorkflowId: v.forkedFromWorkflowId ?? null,
    forkedFromMilestoneId: v.forkedFromMilestoneId ?? null,
    currentPhase: 'preparation',
    status: 'pending',
    createdAt: now,
    updatedAt: now,
    lastTransitionAt: now,
    ...extra,
  });

  const find = async (workflowId: string): Promise<WorkflowRow | undefined> => {
    const [row] = await db.select().from(w).where(eq(w.workflowId, workflowId));
    return row;
  };

  return {
    find,

    /** The row if the reader may see it (scope and owner), else undefined. */
    async findFor(r: WorkflowReader, workflowId: string): Promise<WorkflowRow | undefined> {
      const cond = readable(r);
      if (cond === false) return undefined;
      const [row] = await db
        .select()
        .from(w)
        .where(and(eq(w.workflowId, workflowId), cond));
      return row;
    },

    async list(
      r: WorkflowReader,
      f: { status?: string; batchId?: string; projectId?: number; forkedFrom?: string },
      page: { limit: number; offset: number },
    ): Promise<{ rows: WorkflowRow[]; total: number }> {
      const cond = readable(r);
      if (cond === false) return { rows: [], total: 0 };
      const where = and(
        cond,
        f.status !== undefined ? eq(w.status, f.status) : undefined,
        f.batchId !== undefined ? eq(w.batchId, f.batchId) : undefined,
        f.projectId !== undefined ? eq(w.projectId, f.projectId) : undefined,
        f.forkedFrom !== undefined ? eq(w.forkedFromWorkflowId, f.forkedFrom) : undefined,
      );
      const [rows, [total]] = await Promise.all([
        db.select().from(w).where(where).orderBy(desc(w.id)).limit(page.limit).offset(page.offset),
        db.select({ n: count() }).from(w).where(where),
      ]);
      return { rows, total: Number(total?.n ?? 0) };
    },

    /** One workflow, `pending`. */
    async create(v: NewWorkflow, now: Date): Promise<WorkflowRow> {
      return database.transaction(async (tx) => {
        await tx.db.insert(w).values(insertValues(v, now, {}));
        const [row] = await tx.db.select().from(w).where(eq(w.workflowId, v.workflowId));
        return row!;
      });
    },

    /** A batch and its workflows in one transaction: item 0 `pending`, later items `queued`. */
    async createBatch(v: NewBatch, now: Date): Promise<{ batch: BatchRow; workflows: WorkflowRow[] }> {
      if (v.items.length === 0) throw new Error('a batch needs at least one item');
      return database.transaction(async (tx) => {
        await tx.db.insert(b).values({
          batchId: v.batchId,
          tenantId: v.tenantId,
          userId: v.userId,
          projectId: v.projectId,
          status: 'active',
          itemCount: v.items.length,
          createdAt: now,
          updatedAt: now,
        });
        await tx.db.insert(w).values(
          v.items.map((item, i) =>
            insertValues(item, now, {
              batchId: v.batchId,
              batchPosition: i,
              branchStrategy: 'worktree',
              status: i === 0 ? 'pending' : 'queued',
            }),
          ),
        );
        const [batch] = await tx.db.select().from(b).where(eq(b.batchId, v.batchId));
        const workflows = await tx.db
          .select()
          .from(w)
          .where(eq(w.batchId, v.batchId))
          .orderBy(asc(w.batchPosition));
        return { batch: batch!, workflows };
      });
    },

    /**
     * Compare-and-set: moves the workflow from `expectedStatus` to `next` (and its other state
     * columns) only if its status is still `expectedStatus`. False: someone else moved it first.
     */
    async updateStatus(
      workflowId: string,
      expectedStatus: string,
      next: WorkflowState,
      fields: WorkflowFields = {},
      now: Date = new Date(),
    ): Promise<boolean> {
      const terminal = next.status === 'completed' || next.status === 'cancelled';
      const rows = await db
        .update(w)
        .set({
          ...fields,
          status: next.status,
          currentPhase: next.phase,
          pausedBy: next.pausedBy,
          previousStatus: next.previousStatus,
          feedbackReturnPhase: next.feedbackPhase,
          lastTransitionAt: now,
          updatedAt: now,
          ...(terminal && fields.completedAt === undefined ? { completedAt: now } : {}),
        })
        .where(and(eq(w.workflowId, workflowId), eq(w.status, expectedStatus)))
        .returning({ id: w.id });
      return rows.length > 0;
    },

    /** Sets non-state columns (branch, worktree, PR, deadlines, contexts...). False: no such row. */
    async update(workflowId: string, fields: WorkflowFields, now: Date = new Date()): Promise<boolean> {
      const rows = await db
        .update(w)
        .set({ ...fields, updatedAt: now })
        .where(eq(w.workflowId, workflowId))
        .returning({ id: w.id });
      return rows.length > 0;
    },

    /** Workflows running now, all users (the global `agent_max_concurrent_workflows` slot count). */
    async countRunning(userId?: number): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(w)
        .where(
          and(
            inArray(w.status, [...RUNNING_STATUSES]),
            userId !== undefined ? eq(w.userId, userId) : undefined,
          ),
        );
      return Number(row?.n ?? 0);
    },

    /** The oldest `pending` workflows (the scheduler's candidates). */
    async pending(limit: number): Promise<WorkflowRow[]> {
      return db.select().from(w).where(eq(w.status, 'pending')).orderBy(asc(w.id)).limit(limit);
    },

    /** Deletes the workflow; its milestones and session lines go with it (ON DELETE CASCADE). */
    async delete(workflowId: string): Promise<boolean> {
      const rows = await db.delete(w).where(eq(w.workflowId, workflowId)).returning({ id: w.id });
      return rows.length > 0;
    },
  };
}

export type WorkflowsRepository = ReturnType<typeof workflowsRepository>;
