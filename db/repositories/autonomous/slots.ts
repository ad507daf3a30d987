// The scheduler's SQL for autonomous workflows (spec document 2, "Limits": global concurrent workflows
// `agent_max_concurrent_workflows`, per user the tenant's `max_sessions_per_user`; "States and
// transitions": paused by quota, auto-resumed when quota returns).
//
// `claim` moves one `pending` workflow into its first running status only while both limits have
// room. The count and the write are one critical section, so concurrent claims (several workers, or
// several workflows of one worker) can never pass a limit together:
//   - PostgreSQL: a transaction holding `pg_advisory_xact_lock(SLOT_LOCK_KEY)`, one key for every claim
//     (a claim counts every user's workflows, so any two claims conflict); READ COMMITTED gives each
//     statement after the lock a snapshot that sees the claims committed before it;
//   - SQLite: database.transaction runs BEGIN IMMEDIATE and queues the process's transactions behind
//     each other (db/client.ts), and the write lock serialises other processes.
// Only claims take slots. Other writes leave running statuses (pause, stop, fail) and so only free
// slots; a resume of a manual pause returns a workflow to the slot it held when paused, as the spec's
// table says ("previous activity"), without a claim.
// The state written is the caller's `next` (domain/autonomous/transitions.ts `start`), by the same
// compare-and-set from `pending` as workflowsRepository.updateStatus (it is that method, run on the
// transaction's connection), plus started_at (first start only) and phase_started_at.
import { and, asc, count, eq, inArray, or } from 'drizzle-orm';
import { RUNNING_STATUSES } from '../../../domain/autonomous/states.ts';
import type { WorkflowState } from '../../../domain/autonomous/transitions.ts';
import { DEFAULT_MAX_SESSIONS_PER_USER } from '../../../domain/workspace/session-rules.ts';
import type { DatabaseHandle } from '../../client.ts';
import { workflowsRepository } from './workflows.ts';

/** The advisory lock every slot claim holds on PostgreSQL (distinct from the migration runner's). */
export const SLOT_LOCK_KEY = 719_884_229;

export interface SlotClaim {
  /** started: `next` was written; full: a limit had no room; not_pending: the row is not `pending`. */
  outcome: 'started' | 'full' | 'not_pending';
  /** The row's status after the call (`deleted` when the row no longer exists). */
  status: string;
  /** Why not started: the limit that was full, or why the row could not be claimed. */
  reason?: string;
}

export interface QuotaPausedWorkflow {
  workflowId: string;
  userId: number;
  tenantId: number | null;
}

export function slotsRepository(database: DatabaseHandle) {
  const { db, t, dialect } = database;
  const w = t.autonomousWorkflows;
  const running = [...RUNNING_STATUSES];

  return {
    /**
     * Starts `workflowId` (pending -> `next`) when fewer than `maxGlobal` workflows run in total and
     * fewer than the user's tenant `max_sessions_per_user` run for its user (a user outside any tenant
     * has only the global limit). The tenant is the user's current one, else the workflow's.
     */
    async claim(workflowId: string, next: WorkflowState, maxGlobal: number, now: Date): Promise<SlotClaim> {
      return database.transaction(async (tx) => {
        if (dialect === 'postgres') await tx.sql.query('SELECT pg_advisory_xact_lock(?)', [SLOT_LOCK_KEY]);
        const [row] = await tx.db
          .select({
            status: w.status,
            userId: w.userId,
            tenantId: w.tenantId,
            startedAt: w.startedAt,
            userTenantId: t.users.tenantId,
          })
          .from(w)
          .leftJoin(t.users, eq(t.users.id, w.userId))
          .where(eq(w.workflowId, workflowId));
        if (!row)
          return {
            outcome: 'not_pending',
            status: 'deleted',
            reason: 'the workflow record no longer exists',
          };
        if (row.status !== 'pending')
          return { outcome: 'not_pending', status: row.status, reason: `the workflow is ${row.status}` };

        const [all] = await tx.db.select({ n: count() }).from(w).where(inArray(w.status, running));
        const globalRunning = Number(all?.n ?? 0);
        if (globalRunning >= maxGlobal)
          return {
            outcome: 'full',
            status: row.status,
            reason: `global limit reached: ${globalRunning} of agent_max_concurrent_workflows ${maxGlobal} running`,
          };

        const tenantId = row.userTenantId ?? row.tenantId;
        if (tenantId !== null) {
          const [quota] = await tx.db
            .select({ max: t.tenantQuotas.maxSessionsPerUser })
            .from(t.tenantQuotas)
            .where(eq(t.tenantQuotas.tenantId, tenantId));
          const maxUser = quota?.max ?? DEFAULT_MAX_SESSIONS_PER_USER;
          const [mine] = await tx.db
            .select({ n: count() })
            .from(w)
            .where(and(inArray(w.status, running), eq(w.userId, row.userId)));
          const userRunning = Number(mine?.n ?? 0);
          if (userRunning >= maxUser)
            return {
              outcome: 'full',
              status: row.status,
              reason: `per-user limit reached: ${userRunning} of max_sessions_per_user ${maxUser} running`,
            };
        }

        const won = await workflowsRepository({ ...database, db: tx.db, sql: tx.sql }).updateStatus(
          workflowId,
          'pending',
          next,
          { startedAt: row.startedAt ?? now, phaseStartedAt: now },
          now,
        );
        if (won) return { outcome: 'started', status: next.status };
        // Unreachable while every writer of `pending` rows claims; kept for a write outside claims.
        const [after] = await tx.db.select({ status: w.status }).from(w).where(eq(w.workflowId, workflowId));
        return {
          outcome: 'not_pending',
          status: after?.status ?? 'deleted',
          reason: 'the workflow changed status while it was being started',
        };
      });
    },

    /** Workflows `paused` by an application quota refusal (`paused_by = quota`), oldest first. */
    /** Running workflows of these users or of users of these tenants (the quota tick pauses them). */
    async runningOf(userIds: readonly number[], tenantIds: readonly number[]): Promise<string[]> {
      if (userIds.length === 0 && tenantIds.length === 0) return [];
      const owners = or(
        userIds.length ? inArray(w.userId, [...userIds]) : undefined,
        tenantIds.length ? inArray(w.tenantId, [...tenantIds]) : undefined,
      );
      const rows = await db
        .select({ workflowId: w.workflowId })
        .from(w)
        .where(and(inArray(w.status, [...RUNNING_STATUSES]), owners))
        .orderBy(asc(w.id));
      return rows.map((r) => r.workflowId);
    },

    async pausedForQuota(): Promise<QuotaPausedWorkflow[]> {
      return db
        .select({ workflowId: w.workflowId, userId: w.userId, tenantId: w.tenantId })
        .from(w)
        .where(and(eq(w.status, 'paused'), eq(w.pausedBy, 'quota')))
        .orderBy(asc(w.id));
    },
  };
}

export type SlotsRepository = ReturnType<typeof slotsRepository>;
