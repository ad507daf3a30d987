// GET /api/remote/sessions/<id>/output/stream: Server-Sent Events of a session's output. Replays the
// persisted buffer from an index (Last-Event-ID + 1 when the browser reconnects, else `?from=`, else 0),
// then tails live: each append wakes the stream through the bus, from whichever instance stored it.
// Every event carries `id: <event_index>`, so a reconnecting EventSource resumes without gaps or repeats.
// When the session has ended and everything is sent, an `end` event closes the stream; reconnecting
// to a finished, fully sent session answers 204 (EventSource then stops).
import { type Request, Router } from 'express';
import { z } from 'zod';
import { remoteSessionsRepository } from '../../../db/repositories/remote-sessions.ts';
import { isTerminal } from '../../../domain/remote-session-state.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { topics } from '../../../services/remote-bus.ts';
import { remoteOutput } from '../../../services/remote-output.ts';
import { authenticate } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { remoteAccess } from './access.ts';

const PAGE = 500;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

const query = z.object({ from: z.coerce.number().int().nonnegative().optional() });

function startIndex(req: Request, from: number | undefined): number {
  const last = req.get('last-event-id');
  if (last && /^\d+$/.test(last.trim())) return Number(last.trim()) + 1;
  return from ?? 0;
}

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getRemoteSessionsOutputStream = endpoint({
  tags: ['remote'],
  summary: "A session's output as server-sent events (resumes from Last-Event-ID)",
  query: query,
  responses: {
    200: 'Server-sent events (text/event-stream): one event per output line, id = event_index',
    204: 'The session has ended and nothing is left to send',
  },
});

export function outputStreamRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const access = remoteAccess(deps);
  const sessions = remoteSessionsRepository(deps.database);
  const output = remoteOutput(deps.database);

  r.get('/api/remote/sessions/:id/output/stream', getRemoteSessionsOutputStream, auth, async (req, res) => {
    const { session } = await access.visibleSession(req, String(req.params.id));
    const q = getRemoteSessionsOutputStream.query(req);
    let next = startIndex(req, q.from);
    const sessionId = session.sessionId;
    // A finished session with nothing left to send answers 204, which tells an EventSource to stop
    // reconnecting (it would otherwise reopen the stream after every `end`).
    if (isTerminal(session.status) && !(await output.read(sessionId, next, 1)).length) {
      res.status(204).end();
      return;
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');

    let closed = false;
    let wake: (() => void) | undefined;
    let pending = true;
    const unsubscribe = output.bus.subscribe(topics.sessionOutput(sessionId), () => {
      pending = true;
      wake?.();
    });
    res.on('close', () => {
      closed = true;
      wake?.();
    });
    try {
      while (!closed) {
        if (!pending) {
          const keepalive = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), KEEPALIVE_MS);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = undefined;
          if (closed) break;
          if (keepalive && !pending) {
            res.write(': keepalive\n\n');
            continue;
          }
        }
        pending = false;
        // Read the status before the output: output stored before the session ended is then sent
        // before the `end` event.
        const status = (await sessions.find(sessionId))?.status ?? 'completed';
        for (;;) {
          const events = await output.read(sessionId, next, PAGE);
          for (const e of events)
            res.write(`id: ${e.event_index}\nevent: output\ndata: ${JSON.stringify(e)}\n\n`);
          if (events.length) next = events[events.length - 1]!.event_index + 1;
          if (events.length < PAGE || closed) break;
        }
        if (isTerminal(status)) {
          res.write(
            `event: end\ndata: ${JSON.stringify({ session_id: sessionId, status, next_index: next })}\n\n`,
          );
          break;
        }
      }
    } finally {
      unsubscribe();
      res.end();
    }
  });

  return r;
}
