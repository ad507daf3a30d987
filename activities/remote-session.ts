// Side effects of the remote session workflow: the session row, proxy tokens and agent commands.
// Tokens are issued here and written straight into the sealed command payload, so they never appear
// in a workflow input, result or history. Every activity is safe to retry: rows are upserted and
// commands carry ids chosen by the workflow.
import { eq } from 'drizzle-orm';
import { remoteSessionsRepository } from '../db/repositories/remote-sessions.ts';
import { machineStatus, offlineAfterMs } from '../domain/machine-status.ts';
import { providerForCliTool } from '../domain/remote-cli-tools.ts';
import type { RemoteSessionEvent, RemoteSessionStatus } from '../domain/remote-session-state.ts';
import { proxyTokenService, proxyTokenTtlOverrides } from '../services/proxy-tokens.ts';
import { remoteCommands } from '../services/remote-commands.ts';
import { remoteOutput } from '../services/remote-output.ts';
import type { ActivityDeps } from './deps.ts';

/** How long a lifecycle change waits for the agent to confirm it (the state change stands either way). */
export const AGENT_ACK_WAIT_MS = 10_000;

export interface SessionIdentity {
  sessionId: string;
  machineId: string;
  userId: number;
  tenantId: number | null;
  cliTool: string;
  sessionType: string;
}

export interface BindInput extends SessionIdentity {
  projectPath: string;
  model: string | null;
  title: string | null;
  proxyBaseUrl: string;
  commandId: string;
}

export interface TokenTimes {
  tokenIssuedAt: number;
  tokenExpiresAt: number;
}

export interface TransitionInput {
  sessionId: string;
  machineId: string;
  event: 'pause' | 'resume' | 'stop';
  to: RemoteSessionStatus;
  commandId: string;
}

export interface AgentAck {
  acknowledged: boolean;
  agentResponse: Record<string, unknown> | null;
}

const COMMAND_FOR_EVENT = { pause: 'session.pause', resume: 'session.resume', stop: 'session.stop' } as const;

export function createRemoteSessionActivities(deps: ActivityDeps) {
  const sessions = remoteSessionsRepository(deps.database);
  const commands = remoteCommands(deps);
  const output = remoteOutput(deps.database);
  // Token lifetimes per session type come from settings.remote (proxy_token_ttl_*_minutes).
  const tokens = proxyTokenService({ ...deps, ttlOverrides: proxyTokenTtlOverrides(deps.settings.remote) });
  const offlineAfter = offlineAfterMs(deps.settings.agent);
  const { db, t } = deps.database;

  const tokenRequest = (s: SessionIdentity) => ({
    sessionId: s.sessionId,
    userId: s.userId,
    tenantId: s.tenantId,
    provider: providerForCliTool(s.cliTool),
    sessionType: s.sessionType,
  });

  /** Waits for the agent's answer only while the machine is online: an offline agent gets it later. */
  async function awaitAck(machineId: string, commandId: string): Promise<AgentAck> {
    const [machine] = await db
      .select({ lastHeartbeat: t.remoteMachines.lastHeartbeat })
      .from(t.remoteMachines)
      .where(eq(t.remoteMachines.machineId, machineId));
    if (!machine || machineStatus(machine.lastHeartbeat, deps.now(), offlineAfter) === 'offline')
      return { acknowledged: false, agentResponse: null };
    const res = await commands.waitForResponse(commandId, AGENT_ACK_WAIT_MS);
    return { acknowledged: !!res, agentResponse: res?.payload ?? null };
  }

  return {
    /** Creates the session row bound to its machine, issues the proxy token and queues session.start. */
    async bindRemoteSession(input: BindInput): Promise<TokenTimes> {
      const now = deps.now();
      await sessions.insertIfAbsent({
        sessionId: input.sessionId,
        tenantId: input.tenantId ?? 1,
        sessionType: input.sessionType,
        title: input.title,
        toolName: input.cliTool,
        hostName: input.machineId,
        userId: input.userId,
        status: 'active',
        model: input.model,
        projectPath: input.projectPath,
        remoteMachineId: input.machineId,
        createdAt: now,
        updatedAt: now,
      });
      // Multi-user machines: the OS account the user's session runs as (users.system_account), when set.
      const [owner] = await db
        .select({ systemAccount: t.users.systemAccount })
        .from(t.users)
        .where(eq(t.users.id, input.userId));
      // rotate = revoke whatever an earlier attempt of this activity issued, then issue.
      const token = await tokens.rotate(tokenRequest(input));
      await commands.queue({
        commandId: input.commandId,
        machineId: input.machineId,
        sessionId: input.sessionId,
        commandType: 'session.start',
        payload: {
          session_id: input.sessionId,
          cli_tool: input.cliTool,
          ...(input.model ? { model: input.model } : {}),
          project_path: input.projectPath,
          proxy_token: token.token,
          proxy_base_url: input.proxyBaseUrl,
          ...(owner?.systemAccount ? { system_account: owner.systemAccount } : {}),
        },
      });
      return { tokenIssuedAt: now.getTime(), tokenExpiresAt: token.expiresAt.getTime() };
    },

    /** pause / resume / stop: records the new status, tells the agent, waits briefly for its answer. */
    async applySessionTransition(input: TransitionInput): Promise<AgentAck> {
      const now = deps.now();
      const values: Parameters<typeof sessions.update>[1] = { status: input.to, updatedAt: now };
      if (input.event === 'pause') values.pausedAt = now;
      if (input.event === 'resume') values.pausedAt = null;
      if (input.event === 'stop') values.completedAt = now;
      await sessions.update(input.sessionId, values);
      // A stopped session's token dies with it, before the agent is even told.
      if (input.event === 'stop') await tokens.revokeForSession(input.sessionId, 'stopped');
      await commands.queue({
        commandId: input.commandId,
        machineId: input.machineId,
        sessionId: input.sessionId,
        commandType: COMMAND_FOR_EVENT[input.event],
      });
      await output.notify(input.sessionId);
      return awaitAck(input.machineId, input.commandId);
    },

    async setSessionModel(input: {
      sessionId: string;
      machineId: string;
      model: string;
      commandId: string;
    }): Promise<AgentAck> {
      await sessions.update(input.sessionId, { model: input.model, updatedAt: deps.now() });
      await commands.queue({
        commandId: input.commandId,
        machineId: input.machineId,
        sessionId: input.sessionId,
        commandType: 'session.set_model',
        payload: { model: input.model },
      });
      return awaitAck(input.machineId, input.commandId);
    },

    /** New token for a running session: the old one is revoked, the agent restarts its CLI between turns. */
    async rotateSessionToken(input: SessionIdentity & { commandId: string }): Promise<TokenTimes> {
      const now = deps.now();
      const token = await tokens.rotate(tokenRequest(input));
      await commands.queue({
        commandId: input.commandId,
        machineId: input.machineId,
        sessionId: input.sessionId,
        commandType: 'session.rotate_token',
        payload: { proxy_token: token.token },
      });
      return { tokenIssuedAt: now.getTime(), tokenExpiresAt: token.expiresAt.getTime() };
    },

    /** The session ended without a stop request: the CLI exited, or its machine was unregistered. */
    async finishRemoteSession(input: {
      sessionId: string;
      event: RemoteSessionEvent;
      to: RemoteSessionStatus;
    }): Promise<void> {
      const now = deps.now();
      await sessions.update(input.sessionId, { status: input.to, completedAt: now, updatedAt: now });
      await tokens.revokeForSession(input.sessionId, input.event === 'cli_exited' ? 'completed' : 'stopped');
      await output.notify(input.sessionId);
    },
  };
}

export type RemoteSessionActivities = ReturnType<typeof createRemoteSessionActivities>;
