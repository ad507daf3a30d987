// The only SQL of autonomous_session_lines (migration 0023_autonomous_engine; spec document 2 "Session
// lines"): exactly four rows per workflow, one per stable line (`main`, `review`, `test`,
// `verification`). A row's `session_id` is ours and never changes once written (ensureLines inserts
// with ON CONFLICT DO NOTHING on the unique (workflow_id, line), so concurrent or repeated calls keep
// the first id); `provider_session_id` is the CLI conversation to resume: bound after a run, cleared on
// context overflow (the next run starts a fresh transcript and is rebound to the same line);
// `proxy_token_id` is the jti of the line's current proxy token (never the token).
import { randomUUID } from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import { SESSION_LINE_NAMES, type SessionLineName } from '../../../domain/autonomous/session-lines.ts';
import type { DatabaseHandle } from '../../client.ts';

export const SESSION_LINES = SESSION_LINE_NAMES;
export type SessionLine = SessionLineName;

export interface SessionLineRow {
  workflowId: string;
  line: SessionLine;
  sessionId: string;
  providerSessionId: string | null;
  proxyTokenId: string | null;
  cliTool: string | null;
}

type Db = Pick<DatabaseHandle, 'db' | 't'>;

export function sessionLinesRepository(database: Db) {
  const { db, t } = database;
  const s = t.autonomousSessionLines;
  const toRow = (r: typeof s.$inferSelect): SessionLineRow => ({
    workflowId: r.workflowId,
    line: r.line as SessionLine,
    sessionId: r.sessionId,
    providerSessionId: r.providerSessionId ?? null,
    proxyTokenId: r.proxyTokenId ?? null,
    cliTool: r.cliTool ?? null,
  });
  const touch = async (workflowId: string, line: SessionLine, set: Partial<typeof s.$inferInsert>) => {
    const rows = await db
      .update(s)
      .set({ ...set, updatedAt: new Date() })
      .where(and(eq(s.workflowId, workflowId), eq(s.line, line)))
      .returning({ id: s.id });
    return rows.length > 0;
  };

  return {
    /**
     * The four lines of the workflow, created when missing (stable ids: an existing row keeps its id).
     * Returned in the order of SESSION_LINES. The workflow row must exist (foreign key).
     */
    async ensureLines(workflowId: string, cliTool: string | null): Promise<SessionLineRow[]> {
      await db
        .insert(s)
        .values(SESSION_LINES.map((line) => ({ workflowId, line, sessionId: randomUUID(), cliTool })))
        .onConflictDoNothing();
      const rows = (await db.select().from(s).where(eq(s.workflowId, workflowId)).orderBy(asc(s.id))).map(
        toRow,
      );
      return SESSION_LINES.map((line) => rows.find((r) => r.line === line)!).filter(Boolean);
    },

    async find(workflowId: string, line: SessionLine): Promise<SessionLineRow | undefined> {
      const [r] = await db
        .select()
        .from(s)
        .where(and(eq(s.workflowId, workflowId), eq(s.line, line)));
      return r ? toRow(r) : undefined;
    },

    async list(workflowId: string): Promise<SessionLineRow[]> {
      const rows = (await db.select().from(s).where(eq(s.workflowId, workflowId))).map(toRow);
      return SESSION_LINES.flatMap((line) => rows.filter((r) => r.line === line));
    },

    /** The line resumes `providerSessionId` next time. False when the line does not exist. */
    bindProviderSession: (workflowId: string, line: SessionLine, providerSessionId: string) =>
      touch(workflowId, line, { providerSessionId }),

    /** Context overflow: the next run of the line starts a fresh provider transcript. */
    clearProviderSession: (workflowId: string, line: SessionLine) =>
      touch(workflowId, line, { providerSessionId: null }),

    /** Records the jti of the line's current proxy token (null: no live token). */
    setProxyTokenId: (workflowId: string, line: SessionLine, jti: string | null) =>
      touch(workflowId, line, { proxyTokenId: jti }),
  };
}

export type SessionLinesRepository = ReturnType<typeof sessionLinesRepository>;
