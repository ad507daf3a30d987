// The agent's side of the live terminal relay (agent/PROTOCOL.md "Terminal relay"): one long-poll
// endpoint per terminal, on the instance that holds the relay (the terminal.open command names it as
// `relay_url`). Same pattern as POST /api/remote/agent/message: the agent keeps one poll open with
// `wait_ms` > 0 that receives keystrokes and resizes, and sends output in separate `wait_ms: 0` calls.
// Authenticated with the agent token like every agent call; a terminal answers only the machine (and
// machine generation) its session is bound to. 404 tells the agent the terminal is gone: it closes
// its pseudo-terminal. Bytes travel base64-encoded and are never stored or logged.
import { Router } from 'express';
import { z } from 'zod';
import { remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { remoteSessionsRepository } from '../../../db/repositories/remote-sessions.ts';
import { NotFoundError } from '../../../domain/errors.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { readLargeJson } from '../../middleware/body.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { terminalRelayHub } from '../../terminal-relay-hub.ts';
import { authenticateAgent } from './agent-auth.ts';

export const TERMINAL_MAX_WAIT_MS = 25_000;
const TERMINAL_NOT_FOUND = 'Terminal not found';

const pollBody = z.object({
  wait_ms: z.number().int().min(0).max(TERMINAL_MAX_WAIT_MS).default(0),
  /** Output chunks, base64, in order. */
  output: z
    .array(z.string().max(2 * 1024 * 1024))
    .max(1000)
    .default([]),
  /** The shell ended: the browser's socket closes with 1000 {"reason":"exited"}. */
  exited: z
    .object({ exit_code: z.number().int().nullable(), signal: z.string().max(20).nullable() })
    .optional(),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const postRemoteAgentTerminals = endpoint({
  tags: ['remote'],
  body: pollBody,
  responses: { 200: z.looseObject({ input: z.array(z.unknown()), closed: z.boolean() }) },
});

export function terminalAgentRouter(deps: AppDeps): Router {
  const r = Router();
  const machines = remoteMachinesRepository(deps.database);
  const sessions = remoteSessionsRepository(deps.database);
  const hub = terminalRelayHub(deps);
  /** terminal id -> machine key its session is bound to (checked once per terminal). */
  const verified = new Map<string, string | null>();

  r.post('/api/remote/agent/terminals/:terminalId', postRemoteAgentTerminals, async (req, res) => {
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const machine = await authenticateAgent(machines, req);
    await readLargeJson(req, res);
    const body = postRemoteAgentTerminals.body(req);
    const terminal = hub.find(String(req.params.terminalId));
    if (!terminal || terminal.machineId !== machine.machineId) throw new NotFoundError(TERMINAL_NOT_FOUND);
    if (!verified.has(terminal.id)) {
      const s = await sessions.find(terminal.sessionId);
      verified.set(terminal.id, s?.remoteMachineKey ?? null);
      if (verified.size > 10_000) verified.delete(verified.keys().next().value!);
    }
    if (verified.get(terminal.id) !== machine.machineKey) throw new NotFoundError(TERMINAL_NOT_FOUND);

    for (const chunk of body.output) terminal.output(Buffer.from(chunk, 'base64'));
    if (body.exited) {
      terminal.end(1000, JSON.stringify({ reason: 'exited', exit_code: body.exited.exit_code }));
      return res.json({ input: [], closed: true });
    }
    // Only the held poll (wait_ms > 0) receives keystrokes: output calls never take them, so input
    // arrives in one order through one request at a time.
    if (body.wait_ms === 0) return res.json({ input: [], closed: false });
    const input = await terminal.take(body.wait_ms, gone.signal);
    if (gone.signal.aborted || res.destroyed) {
      if (input) terminal.giveBack(input);
      return;
    }
    res.json({ input: input ?? [], closed: input === null });
  });

  return r;
}
