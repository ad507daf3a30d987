// Queueing commands for agents and waiting for their answers. Used by the API (chat, abort, permission
// answers go straight to the queue) and by the session activities (lifecycle commands). Payload fields
// that carry a proxy token are sealed before they are written and opened only when delivered.
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../db/client.ts';
import { runtimeCommandsRepository } from '../db/repositories/runtime-commands.ts';
import { openPayload, sealPayload } from '../domain/remote-command-payload.ts';
import { remoteBus, topics } from './remote-bus.ts';
import { type KeySettings, storageKey } from './secrets.ts';

/** A queued command not claimed within this time is not delivered any more (spec field expires_at). */
export const DEFAULT_COMMAND_TTL_MS = 10 * 60_000;
/**
 * A delivered command without a response is handed out again after this long (db/repositories/
 * runtime-commands.ts, "Delivery lease"): the poll that claimed it may have died before answering.
 */
export const REDELIVER_AFTER_MS = 15_000;
/** Most commands handed to one poll. */
export const CLAIM_LIMIT = 50;

export interface QueueRequest {
  machineId: string;
  sessionId?: string | null;
  commandType: string;
  payload?: Record<string, unknown>;
  /** Fixed id (idempotent queueing from a retried activity); random otherwise. */
  commandId?: string;
  ttlMs?: number;
}

/** The command as the agent receives it (PROTOCOL.md). */
export interface DeliveredCommand {
  command_id: string;
  command_type: string;
  session_id: string | null;
  payload: Record<string, unknown>;
  created_at: string;
}

export interface CommandResponse {
  status: 'responded';
  payload: Record<string, unknown>;
}

export function remoteCommands(deps: { database: DatabaseHandle; settings: KeySettings; now: () => Date }) {
  const repo = runtimeCommandsRepository(deps.database);
  const bus = remoteBus(deps.database);
  const key = storageKey(deps.settings);

  return {
    async queue(req: QueueRequest): Promise<{ commandId: string }> {
      const now = deps.now();
      const commandId = req.commandId ?? randomUUID();
      const values = {
        commandId,
        machineId: req.machineId,
        sessionId: req.sessionId ?? null,
        commandType: req.commandType,
        payload: sealPayload(req.payload ?? {}, key),
        status: 'pending',
        createdAt: now,
        expiresAt: new Date(now.getTime() + (req.ttlMs ?? DEFAULT_COMMAND_TTL_MS)),
      };
      if (req.commandId) await repo.upsertPending(values);
      else await repo.insert(values);
      await bus.publish(topics.machineCommands(req.machineId));
      return { commandId };
    },

    /** Waits for the agent's answer to a command; undefined when none arrives in time. */
    async waitForResponse(
      commandId: string,
      timeoutMs: number,
      signal?: AbortSignal,
    ): Promise<CommandResponse | undefined> {
      return bus.waitFor(
        topics.commandResponse(commandId),
        async () => {
          const row = await repo.find(commandId);
          if (row?.status !== 'responded') return undefined;
          return {
            status: 'responded' as const,
            payload: row.responsePayload ? (JSON.parse(row.responsePayload) as Record<string, unknown>) : {},
          };
        },
        { timeoutMs, recheckMs: 1000, signal },
      );
    },

    /** Claims a machine's deliverable commands and opens their payloads for the wire. */
    async claim(
      machineId: string,
      limit = CLAIM_LIMIT,
    ): Promise<{ ids: number[]; commands: DeliveredCommand[] }> {
      const now = deps.now();
      const rows = await repo.claimPending(
        machineId,
        now,
        limit,
        new Date(now.getTime() - REDELIVER_AFTER_MS),
      );
      return {
        ids: rows.map((r) => r.id),
        commands: rows.map((r) => ({
          command_id: r.commandId,
          command_type: r.commandType,
          session_id: r.sessionId,
          payload: openPayload(r.payload, key),
          created_at: r.createdAt.toISOString(),
        })),
      };
    },

    /** Returns claimed commands to the queue (their poll went away before the answer was written). */
    async release(machineId: string, ids: number[]): Promise<void> {
      await repo.release(ids);
      await bus.publish(topics.machineCommands(machineId));
    },

    async recordResponse(machineId: string, commandId: string, payload: unknown): Promise<boolean> {
      const ok = await repo.respond(machineId, commandId, JSON.stringify(payload ?? {}), deps.now());
      if (ok) await bus.publish(topics.commandResponse(commandId));
      return ok;
    },

    find: (commandId: string) => repo.find(commandId),
  };
}

export type RemoteCommands = ReturnType<typeof remoteCommands>;
