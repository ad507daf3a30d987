// Local workspace sessions (spec document 2, "Workspace (prompts and sessions)", "Messages and agent
// sessions", rule 5; issue 11 item 6). Rows of agent_sessions with workspace_type 'local'; remote
// sessions are /api/remote/sessions and are never visible here.
//
//   GET    /api/sessions                  ?status=active|completed|expired, tool_name, limit (50), offset (0)
//   POST   /api/sessions                  {tool_name, session_type ('chat'), title, host_name ('localhost'),
//                                         context: object, settings: object, model,
//                                         expires_in_hours: 1..720 (24), project_path?}
//   GET    /api/sessions/stats            counts and token totals of the sessions the caller can read
//   GET    /api/sessions/:session_id      the session and its messages, oldest first (?messages: at most, 200)
//   DELETE /api/sessions/:session_id
//   POST   /api/sessions/:session_id/messages {role, content, tokens_used (0), model?}
//   POST   /api/sessions/:session_id/complete
//
// Access: a session belongs to its creator; administrators read and manage the sessions of their
// read scope (domain/tenant-scope.ts: tenant admins their tenant, system admins all). Anything else is
// a 404. Creating needs a tenant (the session is the tenant's, rule 5) and stays within the tenant's
// max_sessions_per_user live sessions (429 beyond). A project_path upserts the tenant's project and the
// user's user_projects counters. An active session past expires_at reads as `expired`; messages and
// completion of a completed or expired session are refused with 409.
import { randomBytes } from 'node:crypto';
import { type Request, Router } from 'express';
import { z } from 'zod';
import {
  type SessionReader,
  type WorkspaceSessionRow,
  workspaceSessionsRepository,
} from '../../db/repositories/workspace/sessions.ts';
import { ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { inScope, readScope } from '../../domain/tenant-scope.ts';
import { parseInput } from '../../domain/validation.ts';
import {
  effectiveStatus,
  MAX_EXPIRES_IN_HOURS,
  normalizeProjectPath,
  projectNameOf,
  SESSION_DEFAULTS,
} from '../../domain/workspace/session-rules.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, callerIsAdministrator } from '../middleware/auth.ts';
import { readLargeJson } from '../middleware/body.ts';
import { endpoint } from '../openapi/endpoint.ts';

export const DEFAULT_SESSION_PAGE_SIZE = 50;
const HOUR_MS = 3_600_000;

const jsonObject = z
  .record(z.string(), z.unknown())
  .refine((v) => JSON.stringify(v).length <= 64_000, 'must serialise to at most 64000 characters');
const createBody = z.object({
  tool_name: z.string().trim().min(1).max(100),
  session_type: z.string().trim().min(1).max(30).default(SESSION_DEFAULTS.sessionType),
  title: z.string().max(500).nullable().optional(),
  host_name: z.string().trim().min(1).max(255).default(SESSION_DEFAULTS.hostName),
  context: jsonObject.optional(),
  settings: jsonObject.optional(),
  model: z.string().trim().min(1).max(100).nullable().optional(),
  expires_in_hours: z
    .number()
    .int()
    .min(1)
    .max(MAX_EXPIRES_IN_HOURS)
    .default(SESSION_DEFAULTS.expiresInHours),
  project_path: z
    .string()
    .max(500)
    .transform(normalizeProjectPath)
    .refine((p) => p.length > 0, 'must not be empty')
    .optional(),
});
const listQuery = z.object({
  status: z.enum(['active', 'completed', 'expired']).optional(),
  tool_name: z.string().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(DEFAULT_SESSION_PAGE_SIZE),
  offset: z.coerce.number().int().min(0).default(0),
});
const sessionParams = z.object({ session_id: z.string().min(1).max(64) });
const detailQuery = z.object({ messages: z.coerce.number().int().min(0).max(1000).default(200) });
const messageBody = z.object({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.string().max(1_000_000),
  tokens_used: z.number().int().min(0).max(100_000_000).default(0),
  model: z.string().trim().min(1).max(100).nullable().optional(),
});

const parseJson = (text: string | null): unknown => {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
};

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const ns = z.string().nullable();
const ni = z.number().int().nullable();
const workspaceSessionAnswer = z.looseObject({
  session_id: z.string(),
  tenant_id: ni,
  user_id: ni,
  session_type: ns,
  title: ns,
  tool_name: ns,
  host_name: ns,
  status: z.string(),
  model: ns,
  project_path: ns,
  total_tokens: ni,
  message_count: ni,
  created_at: ns,
  updated_at: ns,
  completed_at: ns,
  expires_at: ns,
});
const oneSession = z.looseObject({ session: workspaceSessionAnswer });
const sessionStats = {
  total_sessions: z.number().int(),
  active_sessions: z.number().int(),
  completed_sessions: z.number().int(),
  expired_sessions: z.number().int(),
  total_tokens: z.number().int(),
  total_messages: z.number().int(),
  total_requests: z.number().int(),
};
const tags = ['workspace-sessions'];
const getSessions = endpoint({
  tags,
  query: listQuery,
  responses: {
    200: z.looseObject({
      sessions: z.array(workspaceSessionAnswer),
      total: z.number().int(),
      limit: z.number().int(),
      offset: z.number().int(),
    }),
  },
});
const postSessions = endpoint({ tags, body: createBody, responses: { 201: oneSession } });
const getSessionsStats = endpoint({
  tags,
  responses: {
    200: z.looseObject({
      ...sessionStats,
      by_tool: z.array(z.looseObject({ tool_name: z.string().nullable(), ...sessionStats })),
    }),
  },
});
const getSessionsId = endpoint({
  tags,
  query: detailQuery,
  responses: {
    200: z.looseObject({
      session: workspaceSessionAnswer,
      messages: z.array(
        z.looseObject({
          id: z.number().int(),
          role: z.string(),
          content: ns,
          tokens_used: ni,
          model: ns,
          timestamp: ns,
        }),
      ),
    }),
  },
});
const deleteSessionsId = endpoint({
  tags,
  responses: { 200: z.looseObject({ message: z.string(), session_id: z.string() }) },
});
const postSessionsIdMessages = endpoint({ tags, body: messageBody, responses: { 201: oneSession } });
const postSessionsIdComplete = endpoint({ tags, responses: { 200: oneSession } });

export function sessionView(row: WorkspaceSessionRow, now: Date) {
  return {
    session_id: row.sessionId,
    tenant_id: row.tenantId,
    user_id: row.userId,
    session_type: row.sessionType,
    title: row.title,
    tool_name: row.toolName,
    host_name: row.hostName,
    status: effectiveStatus(row.status, row.expiresAt, now),
    model: row.model,
    project_id: row.projectId,
    project_path: row.projectPath,
    context: parseJson(row.context),
    settings: parseJson(row.settings),
    total_tokens: row.totalTokens,
    total_input_tokens: row.totalInputTokens,
    total_output_tokens: row.totalOutputTokens,
    message_count: row.messageCount,
    request_count: row.requestCount,
    workspace_type: row.workspaceType,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    completed_at: row.completedAt,
    expires_at: row.expiresAt,
  };
}

const stat = (x: Record<string, unknown> | undefined) => ({
  total_sessions: Number(x?.total ?? 0),
  active_sessions: Number(x?.active ?? 0),
  completed_sessions: Number(x?.completed ?? 0),
  expired_sessions: Number(x?.expired ?? 0),
  total_tokens: Number(x?.tokens ?? 0),
  total_messages: Number(x?.messages ?? 0),
  total_requests: Number(x?.requests ?? 0),
});

export function workspaceSessionsRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const repo = () => workspaceSessionsRepository(deps.database);

  const readerOf = (req: Request): SessionReader => ({
    scope: readScope(req.auth.user),
    ownerId: callerIsAdministrator(req) ? undefined : req.auth.user.id,
  });

  /** The session if the caller owns it or administers its tenant; 404 otherwise. */
  async function accessible(req: Request): Promise<WorkspaceSessionRow> {
    const { session_id } = parseInput(sessionParams, req.params);
    const row = await repo().find(session_id);
    const reader = readerOf(req);
    const allowed =
      row != null &&
      inScope(reader.scope, row.tenantId) &&
      (reader.ownerId === undefined || row.userId === reader.ownerId);
    if (!allowed) throw new NotFoundError('Session not found');
    return row;
  }

  r.get('/api/sessions', getSessions, auth, async (req, res) => {
    const q = getSessions.query(req);
    const now = deps.now();
    const { rows, total } = await repo().list(
      readerOf(req),
      { status: q.status, toolName: q.tool_name },
      q,
      now,
    );
    res.json({ sessions: rows.map((row) => sessionView(row, now)), total, limit: q.limit, offset: q.offset });
  });

  r.post('/api/sessions', postSessions, auth, async (req, res) => {
    const b = postSessions.body(req);
    const user = req.auth.user;
    if (user.tenantId == null) throw new ForbiddenError('A tenant is required to create a workspace session');
    const now = deps.now();
    const row = await repo().create(
      {
        sessionId: randomBytes(16).toString('hex'),
        tenantId: user.tenantId,
        userId: user.id,
        toolName: b.tool_name,
        sessionType: b.session_type,
        title: b.title ?? null,
        hostName: b.host_name,
        model: b.model ?? null,
        context: JSON.stringify(b.context ?? {}),
        settings: JSON.stringify(b.settings ?? {}),
        projectPath: b.project_path ?? null,
        projectName: b.project_path ? projectNameOf(b.project_path) : null,
        expiresAt: new Date(now.getTime() + b.expires_in_hours * HOUR_MS),
      },
      now,
    );
    res.status(201).json({ session: sessionView(row, now) });
  });

  // Before /:session_id so "stats" is not taken for an id.
  r.get('/api/sessions/stats', getSessionsStats, auth, async (req, res) => {
    const { overall, byTool } = await repo().stats(readerOf(req), deps.now());
    res.json({ ...stat(overall), by_tool: byTool.map((x) => ({ tool_name: x.tool, ...stat(x) })) });
  });

  r.get('/api/sessions/:session_id', getSessionsId, auth, async (req, res) => {
    const row = await accessible(req);
    const q = getSessionsId.query(req);
    const messages = q.messages > 0 ? await repo().messages(row.sessionId, q.messages) : [];
    res.json({
      session: sessionView(row, deps.now()),
      messages: messages.map((m) => ({
        id: m.id,
        role: m.role,
        content: m.content,
        tokens_used: m.tokensUsed,
        model: m.model,
        timestamp: m.timestamp,
      })),
    });
  });

  r.delete('/api/sessions/:session_id', deleteSessionsId, auth, async (req, res) => {
    const row = await accessible(req);
    await repo().remove(row.sessionId);
    res.json({ message: 'Session deleted', session_id: row.sessionId });
  });

  r.post('/api/sessions/:session_id/messages', postSessionsIdMessages, auth, async (req, res) => {
    await readLargeJson(req, res);
    const row = await accessible(req);
    const b = postSessionsIdMessages.body(req);
    const now = deps.now();
    const updated = await repo().addMessage(
      row.sessionId,
      { role: b.role, content: b.content, tokensUsed: b.tokens_used, model: b.model ?? null },
      now,
    );
    res.status(201).json({ session: sessionView(updated, now) });
  });

  r.post('/api/sessions/:session_id/complete', postSessionsIdComplete, auth, async (req, res) => {
    const row = await accessible(req);
    const now = deps.now();
    res.json({ session: sessionView(await repo().complete(row.sessionId, now), now) });
  });

  return r;
}
