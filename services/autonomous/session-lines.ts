// The four stable session lines of an autonomous workflow (spec document 2 "Session lines"; issue 13
// item 4): `main`, `review`, `test`, `verification`. Each line is
//   - a row of autonomous_session_lines (db/repositories/autonomous/session-lines.ts): its stable
//     session id, the CLI conversation to resume (provider_session_id) and its current proxy token's
//     id (proxy_token_id, the jti; never the token);
//   - an agent_sessions row whose session_id is the line's stable id (session_type and workspace_type
//     `autonomous`, status `active`, the workflow owner's user and tenant, the project path), so the
//     model proxy accepts the line's token and meters every call of the line into daily_messages
//     (agent_session_id) and into the owner's quota;
//   - a proxy token issued for that session id and the provider of the line's CLI tool
//     (domain/remote-cli-tools.ts providerForCliTool). A token is issued by the runner activity when a
//     CLI process starts (the previous ones of the line are revoked: `rotated`) and revoked when the
//     process is gone (`completed`): it lives only in the activity's memory and the CLI's environment,
//     never in a log, a workflow input, a result or a history, and a fresh one is issued for every run,
//     so an expired token is never reused.
import { and, eq } from 'drizzle-orm';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import {
  SESSION_LINES,
  type SessionLine,
  sessionLinesRepository,
} from '../../db/repositories/autonomous/session-lines.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { providerForCliTool } from '../../domain/remote-cli-tools.ts';
import { proxyTokenService, proxyTokenTtlOverrides } from '../proxy-tokens.ts';

export const SESSION_LINE_NAMES = SESSION_LINES;
export type SessionLineName = SessionLine;

export const isSessionLineName = (v: unknown): v is SessionLineName =>
  typeof v === 'string' && (SESSION_LINE_NAMES as readonly string[]).includes(v);

/** session_type and workspace_type of the lines' agent_sessions rows. */
export const AUTONOMOUS_SESSION_TYPE = 'autonomous';

/** The workflow column holding each line's stable id (spec: main_session_id, ...). */
const WORKFLOW_COLUMN = {
  main: 'mainSessionId',
  review: 'reviewSessionId',
  test: 'testSessionId',
  verification: 'verificationSessionId',
} as const;

export interface LineState {
  workflowId: string;
  line: SessionLineName;
  sessionId: string;
  /** The CLI conversation to resume, or null for a fresh start. */
  providerSessionId: string | null;
  userId: number;
  tenantId: number | null;
  projectPath: string | null;
}

interface Deps {
  database: DatabaseHandle;
  settings: Settings;
  now: () => Date;
}

export function sessionLines(deps: Deps) {
  const { db, t } = deps.database;
  const lines = sessionLinesRepository(deps.database);
  const tokens = proxyTokenService({ ...deps, ttlOverrides: proxyTokenTtlOverrides(deps.settings.remote) });

  async function workflowRow(workflowId: string) {
    const [w] = await db
      .select()
      .from(t.autonomousWorkflows)
      .where(eq(t.autonomousWorkflows.workflowId, workflowId));
    if (!w) throw new NotFoundError(`Autonomous workflow ${workflowId} not found`);
    return w;
  }

  /** Inserts the line's agent_sessions row, or makes an existing one active again for a new run. */
  async function ensureSessionRow(
    sessionId: string,
    w: Awaited<ReturnType<typeof workflowRow>>,
    line: SessionLineName,
    cliTool: string,
    model: string | null,
  ): Promise<void> {
    const s = t.agentSessions;
    const [existing] = await db
      .select({ status: s.status, sessionType: s.sessionType })
      .from(s)
      .where(eq(s.sessionId, sessionId));
    if (existing && existing.sessionType !== AUTONOMOUS_SESSION_TYPE)
      throw new Error(`session ${sessionId} exists and is not an autonomous session line`);
    if (!existing) {
      await db
        .insert(s)
        .values({
          sessionId,
          tenantId: w.tenantId ?? 1,
          sessionType: AUTONOMOUS_SESSION_TYPE,
          workspaceType: AUTONOMOUS_SESSION_TYPE,
          title: `${line} line of autonomous workflow ${w.workflowId}`.slice(0, 200),
          toolName: cliTool,
          userId: w.userId,
          status: 'active',
          model,
          projectPath: w.projectPath,
        })
        .onConflictDoNothing();
      return;
    }
    await db
      .update(s)
      .set({ status: 'active', toolName: cliTool, model, completedAt: null, updatedAt: deps.now() })
      .where(eq(s.sessionId, sessionId));
  }

  /**
   * Ensures the four lines of a workflow (autonomous_session_lines rows with stable ids, the workflow's
   * `<line>_session_id` columns, and the agent_sessions rows). Idempotent: safe to retry.
   */
  async function ensureLines(workflowId: string, cliTool: string, model: string | null = null) {
    const w = await workflowRow(workflowId);
    const rows = await lines.ensureLines(workflowId, cliTool);
    for (const row of rows) {
      const line = row.line;
      await ensureSessionRow(row.sessionId, w, line, cliTool, model);
      const column = WORKFLOW_COLUMN[line];
      if (w[column] !== row.sessionId)
        await db
          .update(t.autonomousWorkflows)
          .set({ [column]: row.sessionId })
          .where(eq(t.autonomousWorkflows.workflowId, workflowId));
    }
    return rows.map((r) => ({ line: r.line, sessionId: r.sessionId }));
  }

  /** The line, ready for a run: ensured, its session row active, with its conversation binding. */
  async function openLine(
    workflowId: string,
    line: SessionLineName,
    cliTool: string,
    model: string | null,
  ): Promise<LineState> {
    const w = await workflowRow(workflowId);
    await lines.ensureLines(workflowId, cliTool);
    const row = await lines.find(workflowId, line);
    if (!row) throw new Error(`session line ${line} of ${workflowId} could not be created`);
    await ensureSessionRow(row.sessionId, w, line, cliTool, model);
    return {
      workflowId,
      line,
      sessionId: row.sessionId,
      providerSessionId: row.providerSessionId ?? null,
      userId: w.userId,
      tenantId: w.tenantId ?? null,
      projectPath: w.projectPath ?? null,
    };
  }

  /**
   * A fresh proxy token for the line (the line's earlier tokens are revoked): returned to the caller
   * only, its id recorded on the line. The caller must never log or persist the token.
   */
  async function issueToken(state: LineState, cliTool: string): Promise<{ token: string; expiresAt: Date }> {
    const issued = await tokens.rotate({
      sessionId: state.sessionId,
      userId: state.userId,
      tenantId: state.tenantId,
      provider: providerForCliTool(cliTool),
      sessionType: AUTONOMOUS_SESSION_TYPE,
    });
    await lines.setProxyTokenId(state.workflowId, state.line, issued.jti);
    return { token: issued.token, expiresAt: issued.expiresAt };
  }

  return {
    ensureLines,
    openLine,
    issueToken,
    /** Revokes the line's live tokens (its CLI process is gone). */
    revokeTokens: (sessionId: string) => tokens.revokeForSession(sessionId, 'completed'),
    bindProviderSession: (workflowId: string, line: SessionLineName, providerSessionId: string) =>
      lines.bindProviderSession(workflowId, line, providerSessionId),
    clearProviderSession: (workflowId: string, line: SessionLineName) =>
      lines.clearProviderSession(workflowId, line),
    /** Ends the lines of a finished workflow: sessions `completed`, tokens revoked. */
    async closeLines(workflowId: string): Promise<void> {
      for (const name of SESSION_LINE_NAMES) {
        const row = await lines.find(workflowId, name);
        if (!row) continue;
        await tokens.revokeForSession(row.sessionId, 'completed');
        await db
          .update(t.agentSessions)
          .set({ status: 'completed', completedAt: deps.now(), updatedAt: deps.now() })
          .where(
            and(
              eq(t.agentSessions.sessionId, row.sessionId),
              eq(t.agentSessions.sessionType, AUTONOMOUS_SESSION_TYPE),
            ),
          );
      }
    },
  };
}

export type SessionLines = ReturnType<typeof sessionLines>;
