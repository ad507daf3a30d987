// The only SQL for local workspace sessions: agent_sessions rows with workspace_type 'local' and their
// session_messages (spec document 2, "Messages and agent sessions", "Workspace (prompts and
// sessions)"). Remote sessions (workspace_type 'remote') are never read or written here.
//
// Creation checks the tenant's max_sessions_per_user and inserts in one transaction; on PostgreSQL
// the caller's users row is locked first (FOR UPDATE), so two concurrent creations of one user are
// serialised and cannot both pass the check (SQLite transactions are serialised process-wide).
// Messages update the session totals (and the user's project counters) in the same transaction as
// the message insert, under a row lock of the session on PostgreSQL.
import { and, count, desc, eq, gt, isNull, lte, or, type SQL, sql } from 'drizzle-orm';
import type { ReadScope } from '../../../domain/tenant-scope.ts';
import { isRequest } from '../../../domain/usage/counting.ts';
import {
  assertSessionCapacity,
  assertWritable,
  DEFAULT_MAX_SESSIONS_PER_USER,
  effectiveStatus,
} from '../../../domain/workspace/session-rules.ts';
import type { DatabaseHandle } from '../../client.ts';
import { scopeCondition } from '../../tenant-scope-sql.ts';
import { projectsRepository } from './projects.ts';

export type WorkspaceSessionRow = DatabaseHandle['t']['agentSessions']['$inferSelect'];

/** Whose sessions a read covers: the scope's tenants, and only `userId`'s unless the caller is an admin. */
export interface SessionReader {
  scope: ReadScope;
  /** Set for non-administrators: only their own sessions. */
  ownerId?: number;
}

export interface NewSession {
  sessionId: string;
  tenantId: number;
  userId: number;
  toolName: string;
  sessionType: string;
  title: string | null;
  hostName: string;
  model: string | null;
  context: string | null;
  settings: string | null;
  projectPath: string | null;
  projectName: string | null;
  expiresAt: Date;
}

export interface NewMessage {
  role: string;
  content: string;
  tokensUsed: number;
  model: string | null;
}

export type StatusFilter = 'active' | 'completed' | 'expired';

export function workspaceSessionsRepository(database: DatabaseHandle) {
  const { db, t, dialect } = database;
  const s = t.agentSessions;
  const local = eq(s.workspaceType, 'local');

  const live = (now: Date) => and(eq(s.status, 'active'), or(isNull(s.expiresAt), gt(s.expiresAt, now)))!;
  const lapsed = (now: Date) =>
    or(eq(s.status, 'expired'), and(eq(s.status, 'active'), lte(s.expiresAt, now)))!;

  /** The reader's condition; false when it can see nothing. */
  function readable(r: SessionReader): SQL | false {
    const scoped = scopeCondition(r.scope, s.tenantId);
    if (scoped === false) return false;
    return and(local, scoped, r.ownerId !== undefined ? eq(s.userId, r.ownerId) : undefined)!;
  }

  function statusCondition(status: StatusFilter | undefined, now: Date): SQL | undefined {
    if (status === 'active') return live(now);
    if (status === 'expired') return lapsed(now);
    if (status === 'completed') return eq(s.status, 'completed');
    return undefined;
  }

  async function lockedSession(tx: { db: DatabaseHandle['db'] }, sessionId: string) {
    const q = tx.db
      .select()
      .from(s)
      .where(and(eq(s.sessionId, sessionId), local));
    const [row] = await (dialect === 'postgres' ? q.for('update') : q);
    return row as WorkspaceSessionRow | undefined;
  }

  return {
    async find(sessionId: string): Promise<WorkspaceSessionRow | undefined> {
      const [row] = await db
        .select()
        .from(s)
        .where(and(eq(s.sessionId, sessionId), local));
      return row;
    },

    async list(
      r: SessionReader,
      f: { status?: StatusFilter; toolName?: string },
      page: { limit: number; offset: number },
      now: Date,
    ): Promise<{ rows: WorkspaceSessionRow[]; total: number }> {
      const cond = readable(r);
      if (cond === false) return { rows: [], total: 0 };
      const where = and(
        cond,
        statusCondition(f.status, now),
        f.toolName ? eq(s.toolName, f.toolName) : undefined,
      );
      const [rows, [total]] = await Promise.all([
        db.select().from(s).where(where).orderBy(desc(s.id)).limit(page.limit).offset(page.offset),
        db.select({ n: count() }).from(s).where(where),
      ]);
      return { rows, total: Number(total?.n ?? 0) };
    },

    /** Creates the session unless the user already has max_sessions_per_user live ones (429). */
    async create(v: NewSession, now: Date): Promise<WorkspaceSessionRow> {
      return database.transaction(async (tx) => {
        if (dialect === 'postgres')
          await tx.sql.query('SELECT id FROM users WHERE id = ? FOR UPDATE', [v.userId]);
        const [quota] = await tx.db
          .select({ max: t.tenantQuotas.maxSessionsPerUser })
          .from(t.tenantQuotas)
          .where(eq(t.tenantQuotas.tenantId, v.tenantId));
        const [active] = await tx.db
          .select({ n: count() })
          .from(s)
          .where(and(local, eq(s.userId, v.userId), live(now)));
        assertSessionCapacity(Number(active?.n ?? 0), quota?.max ?? DEFAULT_MAX_SESSIONS_PER_USER);
        let projectId: number | null = null;
        if (v.projectPath) {
          const projects = projectsRepository(tx.sql);
          projectId = await projects.upsert(
            v.tenantId,
            v.projectPath,
            v.projectName ?? v.projectPath,
            v.userId,
          );
          await projects.countSession(v.userId, projectId);
        }
        const [row] = await tx.db
          .insert(s)
          .values({
            sessionId: v.sessionId,
            tenantId: v.tenantId,
            userId: v.userId,
            toolName: v.toolName,
            sessionType: v.sessionType,
            title: v.title,
            hostName: v.hostName,
            model: v.model,
            context: v.context,
            settings: v.settings,
            projectId,
            projectPath: v.projectPath,
            status: 'active',
            workspaceType: 'local',
            createdAt: now,
            updatedAt: now,
            expiresAt: v.expiresAt,
          })
          .returning();
        return row as WorkspaceSessionRow;
      });
    },

    /** Appends a message and adds it to the totals; 409 when the session is completed or expired. */
    async addMessage(sessionId: string, m: NewMessage, now: Date): Promise<WorkspaceSessionRow> {
      return database.transaction(async (tx) => {
        const row = await lockedSession(tx, sessionId);
        if (!row) throw new Error(`session ${sessionId} vanished`);
        assertWritable(effectiveStatus(row.status, row.expiresAt, now));
        await tx.db.insert(t.sessionMessages).values({
          sessionId,
          tenantId: row.tenantId,
          role: m.role,
          content: m.content,
          tokensUsed: m.tokensUsed,
          model: m.model,
          timestamp: now,
        });
        const requests = isRequest(m.role) ? 1 : 0;
        const [updated] = await tx.db
          .update(s)
          .set({
            totalTokens: sql`${s.totalTokens} + ${m.tokensUsed}`,
            messageCount: sql`${s.messageCount} + 1`,
            requestCount: sql`${s.requestCount} + ${requests}`,
            model: m.model ?? row.model,
            updatedAt: now,
          })
          .where(eq(s.id, row.id))
          .returning();
        if (row.projectId != null && row.userId != null)
          await projectsRepository(tx.sql).addUsage(row.userId, row.projectId, m.tokensUsed, requests);
        return updated as WorkspaceSessionRow;
      });
    },

    /** Marks the session completed; 409 when it already is, or has expired. */
    async complete(sessionId: string, now: Date): Promise<WorkspaceSessionRow> {
      return database.transaction(async (tx) => {
        const row = await lockedSession(tx, sessionId);
        if (!row) throw new Error(`session ${sessionId} vanished`);
        assertWritable(effectiveStatus(row.status, row.expiresAt, now));
        const [updated] = await tx.db
          .update(s)
          .set({ status: 'completed', completedAt: now, updatedAt: now })
          .where(eq(s.id, row.id))
          .returning();
        return updated as WorkspaceSessionRow;
      });
    },

    /**
     * Ends every live session of a user or of a tenant's users (status `terminated`, spec rule 6: users
     * over quota get sessions terminated); returns their ids. A terminated session takes no message.
     */
    async terminateLive(owner: { userId?: number; tenantId?: number }, now: Date): Promise<string[]> {
      const whose = owner.userId !== undefined ? eq(s.userId, owner.userId) : eq(s.tenantId, owner.tenantId!);
      const rows = await db
        .update(s)
        .set({ status: 'terminated', completedAt: now, updatedAt: now })
        .where(and(local, live(now), whose))
        .returning({ sessionId: s.sessionId });
      return rows.map((r) => r.sessionId);
    },

    /** Deletes the session; its session_messages go with it (ON DELETE CASCADE). */
    async remove(sessionId: string): Promise<void> {
      await db.delete(s).where(and(eq(s.sessionId, sessionId), local));
    },

    async messages(sessionId: string, limit: number) {
      const m = t.sessionMessages;
      return db.select().from(m).where(eq(m.sessionId, sessionId)).orderBy(m.id).limit(limit);
    },

    /** Counts and token totals of the reader's sessions, overall and per tool. */
    async stats(r: SessionReader, now: Date) {
      const cond = readable(r);
      const n = (c: SQL) => sql<number>`coalesce(sum(case when ${c} then 1 else 0 end), 0)`;
      const fields = {
        total: count(),
        active: n(live(now)),
        completed: n(eq(s.status, 'completed')),
        expired: n(lapsed(now)),
        tokens: sql<number>`coalesce(sum(${s.totalTokens}), 0)`,
        messages: sql<number>`coalesce(sum(${s.messageCount}), 0)`,
        requests: sql<number>`coalesce(sum(${s.requestCount}), 0)`,
      };
      if (cond === false) return { overall: undefined, byTool: [] };
      const [overall] = await db.select(fields).from(s).where(cond);
      const byTool = await db
        .select({ tool: s.toolName, ...fields })
        .from(s)
        .where(cond)
        .groupBy(s.toolName)
        .orderBy(s.toolName);
      return { overall, byTool };
    },
  };
}
