// The agent's side of the API (agent/PROTOCOL.md): registration with a one-time token, the WebSocket
// endpoint (501 until the transport exists), the long-poll message endpoint, and the installer's
// scripts and files. None of these use a browser session: agents authenticate with their agent token.
import { randomUUID } from 'node:crypto';
import { type Request, Router } from 'express';
import { z } from 'zod';
import { registrationTokensRepository } from '../../../db/repositories/registration-tokens.ts';
import { remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { remoteSessionsRepository } from '../../../db/repositories/remote-sessions.ts';
import { isUniqueViolation } from '../../../db/unique-violation.ts';
import {
  BadRequestError,
  ConflictError,
  NotFoundError,
  NotImplementedError,
  UnauthorizedError,
} from '../../../domain/errors.ts';
import { offlineAfterMs } from '../../../domain/machine-status.ts';
import { heartbeatWrite } from '../../../domain/remote-heartbeat.ts';
import { hashRemoteSecret, newRemoteSecret, remoteSecretMatches } from '../../../domain/remote-tokens.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { remoteBus, topics } from '../../../services/remote-bus.ts';
import { commandSweep } from '../../../services/remote-command-sweep.ts';
import { remoteCommands } from '../../../services/remote-commands.ts';
import { heartbeatsBehind } from '../../../services/remote-heartbeats.ts';
import { readLargeJson } from '../../middleware/body.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import {
  INSTALL_SCRIPT_CONTENT_TYPE,
  type InstallScriptKind,
  listAgentFiles,
  loadAgentFile,
  renderInstallScript,
} from '../../remote-agent-files.ts';
import { remoteSessionControl } from '../../remote-session-control.ts';
import { authenticateAgent } from './agent-auth.ts';
import { agentEventSink } from './agent-events.ts';
import { publicUrl } from './public-url.ts';

/** PROTOCOL.md: the server holds a poll at most this long. */
export const MAX_WAIT_MS = 25_000;

/** Agent-chosen machine ids (linear: one bounded character class). */
export const MACHINE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
const text = (max: number) => z.string().trim().max(max);
const registerBody = z.object({
  registration_token: z.string().min(1),
  machine_id: z.string().trim().regex(MACHINE_ID_PATTERN, 'must be 1-64 letters, digits or ._:-'),
  /** The machine's current agent token: an agent renewing its own registration. */
  agent_token: z.string().max(200).optional(),
  machine_name: text(255).optional(),
  hostname: text(255).optional(),
  os_type: text(50).optional(),
  os_version: text(100).optional(),
  capabilities: z
    .record(z.string(), z.unknown())
    .refine((c) => JSON.stringify(c).length <= 65_536, 'must be at most 64 KB of JSON')
    .optional(),
  agent_version: text(50).optional(),
  cli_path: text(500).optional(),
  work_dir: text(500).optional(),
});

const messageBody = z.object({
  wait_ms: z.number().int().min(0).max(MAX_WAIT_MS).default(0),
  heartbeat: z
    .object({ active_sessions: z.array(z.string()).optional(), agent_version: z.string().max(50).optional() })
    .partial()
    .optional(),
  // Each event is checked on its own (agent-events.ts): one bad event must not make the agent re-send
  // the whole batch for ever.
  events: z.array(z.unknown()).max(10_000).default([]),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const postRemoteAgentRegister = endpoint({
  tags: ['remote'],
  summary: 'Register a machine with a one-time registration token (the token is spent even on failure)',
  body: registerBody,
  responses: { 201: z.object({ machine_id: z.string(), agent_token: z.string() }) },
  auth: 'public',
});
// Reserved by the spec: answers 501 until the WebSocket transport exists.
const getRemoteAgentWs = endpoint({
  tags: ['remote'],
  description: 'Reserved by the specification for a WebSocket transport: answers 501 until it exists.',
  responses: {},
  errors: [501],
});
const postRemoteAgentMessage = endpoint({
  tags: ['remote'],
  summary: 'Agent long poll: events and heartbeat in, commands out',
  body: messageBody,
  responses: {
    200: z.looseObject({
      commands: z.array(z.looseObject({})),
      server_time: z.string(),
      // PROTOCOL.md: the number of events dropped as malformed or unknown.
      rejected_events: z.number().int().nonnegative().optional(),
    }),
  },
});
const getRemoteAgentInstallSh = endpoint({
  tags: ['remote'],
  summary: 'The agent installer for Linux and macOS',
  responses: { 200: 'A POSIX shell script' },
});
const getRemoteAgentInstallPs1 = endpoint({
  tags: ['remote'],
  summary: 'The agent installer for Windows',
  responses: { 200: 'A PowerShell script' },
});
const getRemoteAgentFiles = endpoint({
  tags: ['remote'],
  summary: "The agent program's file list",
  responses: { 200: z.looseObject({ files: z.array(z.string()) }) },
});
// Public like the installer that fetches it: the agent's own files only (loadAgentFile).
const getRemoteAgentFile = endpoint({
  tags: ['remote'],
  summary: "One file of the agent program (the installer's download)",
  auth: 'public',
  params: z.object({
    path: z
      .union([z.string(), z.array(z.string())])
      .meta({ type: 'string', description: 'A path from GET /api/remote/agent/files' }),
  }),
  responses: { 200: 'The file (text/javascript, application/json or text/plain)' },
});

export function agentRouter(deps: AppDeps): Router {
  const r = Router();
  const heartbeats = heartbeatsBehind(deps.database, (msg, fields) => deps.logger.warn(fields, msg));
  const machines = remoteMachinesRepository(deps.database);
  const tokens = registrationTokensRepository(deps.database);
  const commands = remoteCommands(deps);
  const bus = remoteBus(deps.database);
  const sweep = commandSweep(deps);
  const control = remoteSessionControl(deps.temporal);
  const sessions = remoteSessionsRepository(deps.database);
  const events = agentEventSink(deps, control);

  r.post('/api/remote/agent/register', postRemoteAgentRegister, async (req, res) => {
    const token = typeof req.body?.registration_token === 'string' ? req.body.registration_token : '';
    if (!token) throw new BadRequestError('registration_token is required');
    const claimedId = typeof req.body?.machine_id === 'string' ? req.body.machine_id.slice(0, 64) : '';
    const agentActor = { userId: null, username: `agent:${claimedId || 'unknown'}`.slice(0, 100) };
    // Consumed first: from here on the token is spent whatever happens (spec: a failed registration
    // consumes it, and a new one must be generated).
    const consumed = await tokens.consume(hashRemoteSecret(token), claimedId || 'unknown', deps.now());
    if (!consumed) {
      await writeAudit(deps, req, {
        action: 'REMOTE_AGENT_REGISTER',
        resourceType: 'remote_machine',
        resourceId: claimedId,
        success: false,
        details: { reason: 'invalid_or_used_token' },
        ...agentActor,
        tenantId: null,
      });
      throw new UnauthorizedError('Registration token is invalid, expired, revoked or already used');
    }
    const audit = (success: boolean, details: Record<string, unknown>) =>
      writeAudit(deps, req, {
        action: 'REMOTE_AGENT_REGISTER',
        resourceType: 'remote_machine',
        resourceId: claimedId,
        success,
        details,
        ...agentActor,
        tenantId: consumed.tenantId,
        targetTenantId: consumed.tenantId,
      });
    const refuse = async (reason: string, message: string): Promise<never> => {
      await audit(false, { reason });
      throw new ConflictError(message);
    };
    let body: z.infer<typeof registerBody>;
    try {
      body = postRemoteAgentRegister.body(req);
    } catch (err) {
      await audit(false, { reason: 'invalid_body', error: (err as Error).message });
      throw err;
    }
    if (consumed.machineId && consumed.machineId !== body.machine_id)
      await refuse('re_enrol_other_machine', 'This registration token re-enrols another machine_id');
    const existing = await machines.find(body.machine_id);
    // Taking over an existing machine id needs proof: its current agent token (the agent renewing its own
    // registration) or a re-enrolment token a system administrator issued for exactly this machine.
    const renewal = !!existing && remoteSecretMatches(body.agent_token ?? '', existing.agentTokenHash);
    const reEnrolment = !!existing && consumed.machineId === existing.machineId;
    if (existing && existing.tenantId !== consumed.tenantId)
      await refuse('machine_id_taken', 'machine_id is already registered to another tenant');
    if (existing && !renewal && !reEnrolment)
      await refuse(
        'machine_id_registered',
        'machine_id is already registered: re-registering it needs its current agent token, or a ' +
          're-enrolment token a system administrator creates for this machine_id',
      );
    const agentToken = newRemoteSecret();
    const now = deps.now();
    // A renewal keeps the machine generation (its sessions go on); anything else starts a new one, so
    // the sessions and queued commands of an earlier holder of this machine id are never inherited.
    const machineKey = renewal && existing?.machineKey ? existing.machineKey : randomUUID();
    const facts = {
      machineName: body.machine_name || body.hostname || body.machine_id,
      hostname: body.hostname ?? null,
      osType: body.os_type?.toLowerCase() ?? null,
      osVersion: body.os_version ?? null,
      ipAddress: req.ip?.slice(0, 64) ?? null,
      capabilities: JSON.stringify(body.capabilities ?? {}),
      agentVersion: body.agent_version ?? null,
      cliPath: body.cli_path || null,
      workDir: body.work_dir || null,
      agentTokenHash: hashRemoteSecret(agentToken),
      machineKey,
      updatedAt: now,
    };
    let endedSessions = 0;
    if (existing) {
      await machines.replaceRegistration(body.machine_id, facts);
      if (!renewal) endedSessions = await endPreviousGeneration(body.machine_id, existing.machineKey, req);
    } else {
      try {
        await machines.insert({
          ...facts,
          machineId: body.machine_id,
          status: 'offline',
          tenantId: consumed.tenantId,
          createdBy: consumed.createdBy,
          createdAt: now,
        });
      } catch (err) {
        // Two registrations of the same new machine id raced; the other one won.
        if (isUniqueViolation(err)) await refuse('machine_id_registered', 'machine_id is already registered');
        throw err;
      }
    }
    await audit(true, {
      machine_name: facts.machineName,
      re_registered: !!existing,
      ...(existing
        ? { via: renewal ? 'agent_token' : 're_enrolment_token', sessions_ended: endedSessions }
        : {}),
    });
    res.status(201).json({ machine_id: body.machine_id, agent_token: agentToken });
  });

  /** After a re-enrolment: the live sessions of the machine's earlier generation end (tokens revoked). */
  async function endPreviousGeneration(machineId: string, oldKey: string | null, req: Request) {
    const live = (await sessions.listLiveOnMachine(machineId)).filter((s) => s.remoteMachineKey === oldKey);
    for (const s of live)
      await control
        .ended(s.sessionId, { reason: 'machine_removed' })
        .catch((err) =>
          req.log.warn({ err, session_id: s.sessionId }, 'could not end session of re-enrolled machine'),
        );
    return live.length;
  }

  r.get('/api/remote/agent/ws', getRemoteAgentWs, (_req, _res) => {
    throw new NotImplementedError(
      'WebSocket transport is not implemented; use HTTP polling (POST /api/remote/agent/message)',
    );
  });

  r.post('/api/remote/agent/message', postRemoteAgentMessage, async (req, res) => {
    // Watched from the start: a poll can go away while its events are still being stored.
    // Only a poll that went away before its answer aborts: aborting builds a DOMException with a stack,
    // which on every answered poll was a few per cent of a core with 1,000 agents (bench/remote --agents).
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const machine = await authenticateAgent(machines, req);
    await readLargeJson(req, res);
    const body = postRemoteAgentMessage.body(req);
    const heartbeat = { agentVersion: body.heartbeat?.agent_version, ipAddress: req.ip };
    // At once when the stored row must change, else written behind (domain/remote-heartbeat.ts): not
    // a commit in front of every poll.
    const heardAt = deps.now();
    const write = heartbeatWrite(machine, heardAt, heartbeat, offlineAfterMs(deps.settings.agent));
    if (write === 'now') await machines.recordHeartbeat(machine.machineId, heardAt, heartbeat);
    else if (write === 'behind') heartbeats.record(machine.machineId, heardAt);
    const processed = await events.ingest(machine.machineId, body.events, req.log, machine.machineKey);

    // Long poll: claim now, or wait until a command is queued for this machine (woken through the bus
    // from any instance, or by this process's sweep: services/remote-command-sweep.ts, instead of a
    // re-check per poll) or wait_ms passes. A poll that went away before the answer gives its claim back.
    // No claim once wait_ms has run out: the agent polls again at once and that poll claims first thing
    // (an idle agent's every poll used to cost two claims, one at each end).
    const unwatch = body.wait_ms > 0 ? sweep.watch(machine.machineId) : () => {};
    const deadline = Date.now() + body.wait_ms;
    const claimed = await bus
      .waitFor(
        topics.machineCommands(machine.machineId),
        async () => {
          if (gone.signal.aborted || (body.wait_ms > 0 && Date.now() >= deadline)) return undefined;
          const c = await commands.claim(machine.machineId);
          return c.commands.length ? c : undefined;
        },
        { timeoutMs: body.wait_ms, recheckMs: MAX_WAIT_MS, signal: gone.signal },
      )
      .finally(unwatch);
    if (gone.signal.aborted || res.destroyed || req.socket.destroyed) {
      if (claimed) await commands.release(machine.machineId, claimed.ids);
      return;
    }
    res.json({
      commands: claimed?.commands ?? [],
      server_time: deps.now().toISOString(),
      ...(processed.rejected ? { rejected_events: processed.rejected } : {}),
    });
  });

  const installScript = (kind: InstallScriptKind) => (req: Request, res: import('express').Response) => {
    res.type(INSTALL_SCRIPT_CONTENT_TYPE[kind]).send(renderInstallScript(kind, publicUrl(deps, req)));
  };
  r.get('/api/remote/agent/install.sh', getRemoteAgentInstallSh, installScript('sh'));
  r.get('/api/remote/agent/install.ps1', getRemoteAgentInstallPs1, installScript('ps1'));

  // The installer's file index (used when it runs without the embedded list).
  r.get('/api/remote/agent/files', getRemoteAgentFiles, (_req, res) => {
    res.json({ files: listAgentFiles() });
  });

  r.get('/api/remote/agent/files/*path', getRemoteAgentFile, async (req, res) => {
    const raw = getRemoteAgentFile.params(req).path;
    const rel = Array.isArray(raw) ? raw.join('/') : String(raw ?? '');
    // Only names from the agent's own file list are served (loadAgentFile never touches other paths).
    const file = await loadAgentFile(rel);
    if (!file) throw new NotFoundError('No such agent file');
    res.type(file.contentType).send(file.body);
  });

  return r;
}
