// Remote sessions (spec document 1, "Remote sessions"). Creation and lifecycle changes (pause, resume,
// stop, model) go through the session's workflow as updates, so they return after the change; chat,
// abort and permission answers are hot paths and go straight to the command queue after the
// authority check. Visibility: owner, system admin, machine admin of the session's machine; anyone
// else gets 404.
import { randomUUID } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { machineAssignmentsRepository } from '../../../db/repositories/machine-assignments.ts';
import { remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { remoteSessionsRepository } from '../../../db/repositories/remote-sessions.ts';
import { isSystemAdmin } from '../../../domain/access.ts';
import { BadRequestError, ConflictError } from '../../../domain/errors.ts';
import { machineStatus, offlineAfterMs } from '../../../domain/machine-status.ts';
import { mayPerform } from '../../../domain/remote-authority.ts';
import { DEFAULT_CLI_TOOL, isValidCliToolName } from '../../../domain/remote-cli-tools.ts';
import {
  isSafeProjectPath,
  MODEL_PATTERN,
  MODEL_RULE,
  PROJECT_PATH_RULE,
} from '../../../domain/remote-session-input.ts';
import { acceptsCommands, transition } from '../../../domain/remote-session-state.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { remoteCommands } from '../../../services/remote-commands.ts';
import { remoteOutput } from '../../../services/remote-output.ts';
import { remoteMessagesFor } from '../../../services/usage/remote-messages.ts';
import { authenticate } from '../../middleware/auth.ts';
import { readLargeJson } from '../../middleware/body.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { remoteSessionControl } from '../../remote-session-control.ts';
import { remoteAccess, type SessionAccess } from './access.ts';
import { publicUrl } from './public-url.ts';
import {
  outputEventSchema,
  sessionDetailSchema,
  sessionDetailView,
  sessionSchema,
  sessionView,
} from './views.ts';

/** How long a permission answer waits for the agent to confirm it reached the CLI. */
export const PERMISSION_ACK_WAIT_MS = 10_000;
export const MAX_CHAT_CHARS = 1_000_000;
const OUTPUT_PAGE = 1000;

const createBody = z.object({
  machine_id: z.string({ error: 'machine_id is required' }).trim().min(1, 'machine_id is required').max(64),
  project_path: z
    .string({ error: 'project_path is required' })
    .trim()
    .min(1, 'project_path is required')
    .max(500)
    .refine(isSafeProjectPath, PROJECT_PATH_RULE),
  cli_tool: z.string().trim().refine(isValidCliToolName, 'invalid cli_tool').default(DEFAULT_CLI_TOOL),
  model: z.string().trim().regex(MODEL_PATTERN, MODEL_RULE).optional(),
  title: z.string().max(500).optional(),
});
const chatBody = z.object({ content: z.string().min(1).max(MAX_CHAT_CHARS) });
const modelBody = z.object({ model: z.string().trim().regex(MODEL_PATTERN, MODEL_RULE) });
const permissionBody = z.object({
  request_id: z.string().min(1).max(200),
  decision: z.enum(['allow', 'deny']),
  message: z.string().max(2000).optional(),
});
const outputQuery = z.object({
  from: z.coerce.number().int().nonnegative().default(0),
  limit: z.coerce.number().int().min(1).max(OUTPUT_PAGE).default(OUTPUT_PAGE),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const commandAnswer = z.looseObject({
  success: z.literal(true),
  session_id: z.string(),
  command_id: z.string(),
});
const controlAnswer = z.looseObject({
  success: z.literal(true),
  session_id: z.string(),
  status: z.string(),
  model: z.string().nullable(),
  agent_acknowledged: z.boolean(),
  agent_response: z.looseObject({}).nullable(),
});
const postRemoteSessions = endpoint({
  tags: ['remote'],
  body: createBody,
  responses: {
    201: z.looseObject({
      success: z.literal(true),
      session_id: z.string(),
      status: z.string(),
      session: sessionDetailSchema.nullable(),
    }),
  },
  errors: [409, 503],
});
const getRemoteSessions = endpoint({
  tags: ['remote'],
  summary: "The caller's sessions and those on machines it administers",
  responses: { 200: z.object({ sessions: z.array(sessionSchema) }) },
});
const postRemoteSessionsChat = endpoint({
  tags: ['remote'],
  body: chatBody,
  responses: { 200: commandAnswer },
  errors: [409],
});
const postRemoteSessionsPause = endpoint({
  tags: ['remote'],
  responses: { 200: controlAnswer },
  errors: [409],
});
const postRemoteSessionsResume = endpoint({
  tags: ['remote'],
  responses: { 200: controlAnswer },
  errors: [409],
});
const postRemoteSessionsStop = endpoint({
  tags: ['remote'],
  responses: { 200: controlAnswer },
  errors: [409],
});
const postRemoteSessionsAbort = endpoint({
  tags: ['remote'],
  responses: { 200: commandAnswer },
  errors: [409],
});
const postRemoteSessionsModel = endpoint({
  tags: ['remote'],
  body: modelBody,
  responses: { 200: controlAnswer },
  errors: [409],
});
const permissionAnswer = z.looseObject({
  success: z.boolean(),
  session_id: z.string(),
  command_id: z.string(),
  agent_acknowledged: z.boolean(),
  agent_response: z.looseObject({}).nullable(),
});
const postRemoteSessionsPermission = endpoint({
  tags: ['remote'],
  body: permissionBody,
  responses: { 200: permissionAnswer, 202: permissionAnswer },
  errors: [409],
});
const getRemoteSessionsOutput = endpoint({
  tags: ['remote'],
  query: outputQuery,
  responses: {
    200: z.looseObject({
      session_id: z.string(),
      status: z.string(),
      events: z.array(outputEventSchema),
      next_index: z.number().int(),
    }),
  },
});
const getRemoteSession = endpoint({
  tags: ['remote'],
  summary: 'A session with a page of its output',
  responses: { 200: z.object({ session: sessionDetailSchema }) },
  query: z.object({ output_from: outputQuery.shape.from, output_limit: outputQuery.shape.limit }),
});

export function sessionsRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const access = remoteAccess(deps);
  const sessions = remoteSessionsRepository(deps.database);
  const machines = remoteMachinesRepository(deps.database);
  const commands = remoteCommands(deps);
  const output = remoteOutput(deps.database);
  const control = remoteSessionControl(deps.temporal);
  const messages = remoteMessagesFor(deps);

  const audit = (
    req: Request,
    action: string,
    sessionId: string,
    details: Record<string, unknown> = {},
    success = true,
  ) =>
    writeAudit(deps, req, {
      action,
      resourceType: 'remote_session',
      resourceId: sessionId,
      details,
      success,
    });

  r.post('/api/remote/sessions', postRemoteSessions, auth, async (req, res) => {
    const body = postRemoteSessions.body(req);
    const machine = await machines.find(body.machine_id);
    const { standing } = await access.standingOn(req, body.machine_id);
    const refuse = async (reason: string, message: string): Promise<never> => {
      await writeAudit(deps, req, {
        action: 'REMOTE_SESSION_CREATE',
        resourceType: 'remote_machine',
        resourceId: body.machine_id,
        success: false,
        details: { reason },
      });
      throw new BadRequestError(message);
    };
    if (!machine || !mayPerform('create_session', standing))
      await refuse('not_assigned', 'You are not assigned to this machine');
    if (machineStatus(machine!.lastHeartbeat, deps.now(), offlineAfterMs(deps.settings.agent)) !== 'online')
      await refuse('machine_offline', 'The machine is offline');
    const sessionId = randomUUID();
    const result = await control.start({
      sessionId,
      machineId: body.machine_id,
      userId: req.auth.user.id,
      tenantId: machine!.tenantId ?? req.auth.user.tenantId,
      projectPath: body.project_path,
      cliTool: body.cli_tool,
      model: body.model ?? null,
      title: body.title ?? null,
      proxyBaseUrl: `${publicUrl(deps, req)}/api/remote/llm-proxy`,
      sessionType: 'general',
    });
    await audit(req, 'REMOTE_SESSION_CREATE', sessionId, {
      machine_id: body.machine_id,
      cli_tool: body.cli_tool,
      project_path: body.project_path,
    });
    const row = await sessions.find(sessionId);
    res.status(201).json({
      success: true,
      session_id: sessionId,
      status: result.status,
      session: row ? sessionDetailView(row, [], 0) : null,
    });
  });

  r.get('/api/remote/sessions', getRemoteSessions, auth, async (req, res) => {
    const user = req.auth.user;
    // Own sessions, plus every session on the machines the caller administers (system admins: all).
    const administered = async () =>
      (await machineAssignmentsRepository(deps.database).listForUser(user.id))
        .filter((a) => a.permission === 'admin')
        .map((a) => a.machineId);
    const rows = isSystemAdmin(user)
      ? await sessions.listVisible({ all: true }, 500)
      : await sessions.listVisible({ userId: user.id, machineIds: await administered() }, 500);
    res.json({ sessions: rows.map(sessionView) });
  });

  r.get('/api/remote/sessions/:id', getRemoteSession, auth, async (req, res) => {
    const { session } = await access.visibleSession(req, String(req.params.id));
    const q = getRemoteSession.query(req);
    const events = await output.read(session.sessionId, q.output_from, q.output_limit);
    const next = events.length ? events[events.length - 1]!.event_index + 1 : q.output_from;
    res.json({ session: sessionDetailView(session, events, next) });
  });

  r.get('/api/remote/sessions/:id/output', getRemoteSessionsOutput, auth, async (req, res) => {
    const { session } = await access.visibleSession(req, String(req.params.id));
    const q = getRemoteSessionsOutput.query(req);
    const events = await output.read(session.sessionId, q.from, q.limit);
    res.json({
      session_id: session.sessionId,
      status: session.status,
      events,
      next_index: events.length ? events[events.length - 1]!.event_index + 1 : q.from,
    });
  });

  /** The session, checked for visibility and for a live CLI that can take a command. */
  async function liveSession(req: Request, action: string): Promise<SessionAccess> {
    const found = await access.visibleSession(req, String(req.params.id));
    if (!acceptsCommands(found.session.status)) {
      await audit(req, action, found.session.sessionId, { reason: `session_${found.session.status}` }, false);
      throw new ConflictError(`The session is ${found.session.status}`);
    }
    return found;
  }

  r.post('/api/remote/sessions/:id/chat', postRemoteSessionsChat, auth, async (req, res) => {
    await readLargeJson(req, res); // up to MAX_CHAT_CHARS characters: more than the 1 MB default
    const { content } = postRemoteSessionsChat.body(req);
    const { session } = await liveSession(req, 'REMOTE_SESSION_CHAT');
    const now = deps.now();
    const { commandId } = await commands.queue({
      machineId: session.remoteMachineId!,
      sessionId: session.sessionId,
      commandType: 'session.input',
      payload: { content },
    });
    // The prompt's user row in daily_messages; it also counts the session's message_count.
    const machine = session.remoteMachineId ? await machines.find(session.remoteMachineId) : undefined;
    await messages.recordPrompt({
      commandId,
      sessionId: session.sessionId,
      userId: session.userId ?? req.auth.user.id,
      tenantId: session.tenantId,
      toolName: session.toolName,
      hostName: machine?.machineName ?? session.hostName,
      projectPath: session.projectPath,
      username: req.auth.user.username,
      content,
      model: session.model,
      at: now,
    });
    await sessions.insertMessage({
      sessionId: session.sessionId,
      tenantId: session.tenantId,
      role: 'user',
      content,
      model: session.model,
      timestamp: now,
      metadata: JSON.stringify({ command_id: commandId }),
    });
    await audit(req, 'REMOTE_SESSION_CHAT', session.sessionId, {
      command_id: commandId,
      chars: content.length,
    });
    res.json({ success: true, session_id: session.sessionId, command_id: commandId });
  });

  const lifecycle = (event: 'pause' | 'resume' | 'stop') => async (req: Request, res: Response) => {
    const action = `REMOTE_SESSION_${event.toUpperCase()}`;
    const { session } = await access.visibleSession(req, String(req.params.id));
    const t = transition(session.status as never, event);
    if (!t.ok) {
      await audit(req, action, session.sessionId, { reason: t.reason }, false);
      throw new ConflictError(t.reason);
    }
    const result = await control[event](session.sessionId);
    await audit(req, action, session.sessionId, { agent_acknowledged: result.agent_acknowledged });
    res.json({ success: true, ...result });
  };
  r.post('/api/remote/sessions/:id/pause', postRemoteSessionsPause, auth, lifecycle('pause'));
  r.post('/api/remote/sessions/:id/resume', postRemoteSessionsResume, auth, lifecycle('resume'));
  r.post('/api/remote/sessions/:id/stop', postRemoteSessionsStop, auth, lifecycle('stop'));

  r.post('/api/remote/sessions/:id/abort', postRemoteSessionsAbort, auth, async (req, res) => {
    const { session } = await liveSession(req, 'REMOTE_SESSION_ABORT');
    const { commandId } = await commands.queue({
      machineId: session.remoteMachineId!,
      sessionId: session.sessionId,
      commandType: 'session.abort',
    });
    await audit(req, 'REMOTE_SESSION_ABORT', session.sessionId, { command_id: commandId });
    res.json({ success: true, session_id: session.sessionId, command_id: commandId });
  });

  r.post('/api/remote/sessions/:id/model', postRemoteSessionsModel, auth, async (req, res) => {
    const { model } = postRemoteSessionsModel.body(req);
    const { session } = await liveSession(req, 'REMOTE_SESSION_MODEL');
    const result = await control.setModel(session.sessionId, model);
    await audit(req, 'REMOTE_SESSION_MODEL', session.sessionId, {
      model,
      agent_acknowledged: result.agent_acknowledged,
    });
    res.json({ success: true, ...result });
  });

  // Synchronous: the caller waits (by command id) for the agent to say whether the answer reached the CLI.
  r.post('/api/remote/sessions/:id/permission', postRemoteSessionsPermission, auth, async (req, res) => {
    const body = postRemoteSessionsPermission.body(req);
    const { session } = await liveSession(req, 'REMOTE_SESSION_PERMISSION');
    const { commandId } = await commands.queue({
      machineId: session.remoteMachineId!,
      sessionId: session.sessionId,
      commandType: 'session.permission_response',
      payload: {
        request_id: body.request_id,
        decision: body.decision,
        ...(body.message ? { message: body.message } : {}),
      },
    });
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const response = await commands.waitForResponse(commandId, PERMISSION_ACK_WAIT_MS, gone.signal);
    await audit(req, 'REMOTE_SESSION_PERMISSION', session.sessionId, {
      command_id: commandId,
      request_id: body.request_id,
      decision: body.decision,
      agent_acknowledged: !!response,
    });
    res.status(response ? 200 : 202).json({
      success: response ? response.payload.ok !== false : true,
      session_id: session.sessionId,
      command_id: commandId,
      agent_acknowledged: !!response,
      agent_response: response?.payload ?? null,
    });
  });

  return r;
}
