// What an agent poll carries back (PROTOCOL.md "events"): CLI output lines, command responses and CLI
// state changes. Outputs go to the session's buffer in order, de-duplicated by the agent's
// (run_id, seq); a state change is buffered too (stream `request_state`) and an exit ends the session
// through its workflow; the agent's first `started` note is recorded as cli_started_at. Events of sessions that are not bound to the calling machine are dropped.
import type { Logger } from 'pino';
import { z } from 'zod';
import { type RemoteSessionRow, remoteSessionsRepository } from '../../../db/repositories/remote-sessions.ts';
import type { OutputToAppend } from '../../../db/repositories/runtime-outputs.ts';
import { isTerminal } from '../../../domain/remote-session-state.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { remoteCommands } from '../../../services/remote-commands.ts';
import { remoteOutput } from '../../../services/remote-output.ts';
import type { RemoteSessionControl } from '../../remote-session-control.ts';

const outputEvent = z.object({
  type: z.literal('output'),
  session_id: z.string().min(1).max(64),
  run_id: z.string().max(64).optional(),
  seq: z.number().int().nonnegative().optional(),
  stream: z.enum(['stdout', 'stderr', 'system', 'permission']),
  data: z.string(),
  timestamp: z.string().max(40).optional(),
});
const responseEvent = z.object({
  type: z.literal('response'),
  command_id: z.string().min(1).max(64),
  payload: z.record(z.string(), z.unknown()).optional(),
});
const stateEvent = z.object({
  type: z.literal('session_state'),
  session_id: z.string().min(1).max(64),
  state: z.enum(['running', 'paused', 'exited']),
  exit_code: z.number().int().nullable().optional(),
  signal: z.string().max(20).nullable().optional(),
  timestamp: z.string().max(40).optional(),
});
const agentEvent = z.discriminatedUnion('type', [outputEvent, responseEvent, stateEvent]);

/** The agent's system note that it spawned the CLI (agent/session.ts: `{type:'agent',event:'started'}`). */
function isCliStartedNote(data: string): boolean {
  if (!data.includes('"started"')) return false;
  try {
    const v = JSON.parse(data) as { type?: unknown; event?: unknown };
    return v?.type === 'agent' && v.event === 'started';
  } catch {
    return false;
  }
}

export function agentEventSink(deps: AppDeps, control: RemoteSessionControl) {
  const sessions = remoteSessionsRepository(deps.database);
  const output = remoteOutput(deps.database);
  const commands = remoteCommands(deps);

  return {
    async ingest(
      machineId: string,
      raw: unknown[],
      log: Logger,
      machineKey: string | null = null,
    ): Promise<{ rejected: number }> {
      if (!raw.length) return { rejected: 0 };
      const now = deps.now();
      let rejected = 0;
      const owned = new Map<string, RemoteSessionRow | null>();
      const sessionOf = async (sessionId: string) => {
        if (!owned.has(sessionId)) {
          const s = await sessions.find(sessionId);
          // Bound to this machine id AND its current generation (not a deleted predecessor's session).
          const mine = s && s.remoteMachineId === machineId && s.remoteMachineKey === machineKey;
          owned.set(sessionId, mine ? s : null);
        }
        return owned.get(sessionId) ?? null;
      };
      // Per session, in arrival order; appended one batch per session.
      const batches = new Map<string, OutputToAppend[]>();
      const push = (sessionId: string, entry: OutputToAppend) => {
        const list = batches.get(sessionId);
        if (list) list.push(entry);
        else batches.set(sessionId, [entry]);
      };
      const exits: { sessionId: string; exitCode: number | null }[] = [];

      for (const item of raw) {
        const parsed = agentEvent.safeParse(item);
        if (!parsed.success) {
          rejected++;
          continue;
        }
        const e = parsed.data;
        if (e.type === 'response') {
          await commands.recordResponse(machineId, e.command_id, e.payload ?? {});
          continue;
        }
        if (!(await sessionOf(e.session_id))) {
          rejected++;
          continue;
        }
        if (e.type === 'output') {
          // The agent's "CLI started (pid N)" note: the CLI process exists. A session that ends without one
          // ended before its CLI started (refused start, failed spawn) and is not "completed".
          if (e.stream === 'system' && isCliStartedNote(e.data))
            await sessions.markCliStarted(e.session_id, now);
          const sourceKey = e.seq !== undefined ? `${e.run_id ?? ''}:${e.seq}` : null;
          push(e.session_id, {
            stream: e.stream,
            payload: JSON.stringify({ data: e.data, timestamp: e.timestamp ?? now.toISOString() }),
            sourceKey,
            createdAt: now,
          });
        } else {
          const data = JSON.stringify({
            type: 'session_state',
            state: e.state,
            exit_code: e.exit_code ?? null,
            signal: e.signal ?? null,
          });
          const at = e.timestamp ?? now.toISOString();
          push(e.session_id, {
            stream: 'request_state',
            payload: JSON.stringify({ data, timestamp: at }),
            sourceKey: `state:${e.state}:${at}`,
            createdAt: now,
          });
          if (e.state === 'exited') exits.push({ sessionId: e.session_id, exitCode: e.exit_code ?? null });
        }
      }
      for (const [sessionId, entries] of batches) await output.append(sessionId, entries);
      for (const exit of exits) {
        const s = owned.get(exit.sessionId);
        if (!s || isTerminal(s.status)) continue;
        // The workflow finishes the session (status, token revocation). A Temporal outage must not make
        // the agent re-send its output, so the failure is logged, not returned.
        await control
          .ended(exit.sessionId, { reason: 'cli_exited', exitCode: exit.exitCode })
          .catch((err) => log.warn({ err, session_id: exit.sessionId }, 'could not signal session end'));
      }
      if (rejected) log.warn({ machine_id: machineId, rejected }, 'agent events rejected');
      return { rejected };
    },
  };
}
