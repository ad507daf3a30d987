// GET /api/autonomous/workflows/:id/events/stream (spec document 2, "Events" 2): Server-Sent Events of
// what the workflow's agent does, from the stored activity bus (services/autonomous/activity-bus.ts):
// whichever worker runs the CLI, every API instance streams its events. Frames:
//   event: connected     at once, with the workflow id and status;
//   event: keepalive     a visible event every SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS (default 30 s,
//                        LIMITS.streamKeepaliveSeconds), so clients see the stream is alive;
//   id: <seq>            every stored event of the workflow: tool_use, assistant_text, usage, retry,
//   event: <type>        system, error, milestone_updated, with the event's fields as JSON data; seq
//                        is gap-free per workflow.
// Resuming like the session output stream: with `Last-Event-ID: n` (an EventSource sends it when it
// reconnects) the stored events after n are replayed first, else with `?from=n` those from n on, else
// the stream starts with the next event; then it tails live, each seq at most once and in order. An id
// beyond the stored end (the workflow's rows were purged since) replays what is stored.
// Never sent: an assistant_text whose text is empty or whitespace, and any thinking estimate (fields
// are copied from an allow-list; a field or subtype naming thinking is dropped). The stream is
// observability only (milestones and sessions are the record; the bus keeps a bounded tail).
// Bounds: the bus refuses a subscriber past its per-workflow cap (TooManyActivityListeners -> 429,
// before any byte of the stream is sent); the subscription ends when the client goes away.
import type { Request, Response } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import { TooManyRequestsError } from '../../../domain/errors.ts';
import {
  type AutonomousActivityEvent,
  activityBusFor,
  TooManyActivityListeners,
} from '../../../services/autonomous/activity-bus.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { AUTONOMOUS_PARAMS, autonomousAccess } from './access.ts';

const EVENT_TYPES = new Set([
  'tool_use',
  'assistant_text',
  'usage',
  'retry',
  'system',
  'error',
  'milestone_updated',
]);

/** The fields a client sees, in this order; anything else on the event is not sent. */
const FIELDS = [
  'workflowId',
  'line',
  'type',
  'at',
  'tool',
  'input',
  'text',
  'subtype',
  'attempt',
  'usage',
  'providerSessionId',
  'model',
  'milestoneId',
  'status',
  'kind',
] as const;
const WIRE: Record<(typeof FIELDS)[number], string> = {
  workflowId: 'workflow_id',
  line: 'line',
  type: 'type',
  at: 'at',
  tool: 'tool',
  input: 'input',
  text: 'text',
  subtype: 'subtype',
  attempt: 'attempt',
  usage: 'usage',
  providerSessionId: 'provider_session_id',
  model: 'model',
  milestoneId: 'milestone_id',
  status: 'status',
  kind: 'kind',
};

const mentionsThinking = (v: unknown) => typeof v === 'string' && v.toLowerCase().includes('thinking');

/** Stored events read at once when replaying or catching up. */
const PAGE = 500;

const query = z.object({ from: z.coerce.number().int().nonnegative().optional() });

/** The last seq the client has: Last-Event-ID, else `from - 1`; undefined to start with the next. */
function resumeAfter(req: Request, from: number | undefined): number | undefined {
  const last = req.get('last-event-id')?.trim();
  if (last && /^\d+$/.test(last)) return Number(last);
  return from === undefined ? undefined : Math.max(0, from - 1);
}

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getAutonomousWorkflowsEventsStream = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  query,
  tags: ['autonomous'],
  summary: "A workflow's live activity as server-sent events (resumes from Last-Event-ID)",
  responses: { 200: "Server-sent events (text/event-stream): the workflow's activity, id = seq" },
});

/** The SSE frame of a bus event, or null when the event is not to be sent. */
export function activityFrame(e: AutonomousActivityEvent): string | null {
  if (!EVENT_TYPES.has(e.type)) return null;
  if (e.type === 'assistant_text' && (typeof e.text !== 'string' || e.text.trim() === '')) return null;
  if (mentionsThinking(e.subtype)) return null;
  const data: Record<string, unknown> = {};
  for (const f of FIELDS) {
    const v = e[f];
    if (v === undefined) continue;
    if (f === 'usage' && v && typeof v === 'object') {
      const u = v as Record<string, unknown>;
      data.usage = Object.fromEntries(Object.entries(u).filter(([k]) => !mentionsThinking(k)));
      continue;
    }
    data[WIRE[f]] = v;
  }
  return `event: ${e.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

function open(res: Response) {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders?.();
}

export function autonomousEventsRouter(deps: AppDeps): Router {
  const r = Router();
  const access = autonomousAccess(deps);

  r.get(
    '/api/autonomous/workflows/:id/events/stream',
    getAutonomousWorkflowsEventsStream,
    async (req, res) => {
      const row = await access.workflow(req);
      const q = getAutonomousWorkflowsEventsStream.query(req);
      const workflowId = row.workflowId;
      const bus = activityBusFor(deps.database, deps.logger);
      /** The highest seq handled (sent, or skipped by activityFrame); the stream goes on after it. */
      let cursor = 0;
      let live = false;
      let closed = false;
      const send = (e: AutonomousActivityEvent) => {
        if (closed || e.seq === undefined || e.seq <= cursor) return;
        cursor = e.seq;
        const frame = activityFrame(e);
        if (frame) res.write(`id: ${e.seq}\n${frame}`);
      };
      const readAfterCursor = async () => {
        for (;;) {
          const events = await bus.after(workflowId, cursor, PAGE);
          for (const e of events) send(e);
          if (events.length < PAGE || closed) return;
        }
      };
      /** Reads and sends every stored event after the cursor: one read at a time, at most one queued. */
      let chain: Promise<void> = Promise.resolve();
      let queued = false;
      let busy = false;
      const catchUp = (): Promise<void> => {
        if (!live || closed || queued) return chain;
        queued = true;
        chain = chain.then(async () => {
          queued = false;
          busy = true;
          try {
            await readAfterCursor();
          } catch (err) {
            if (!closed) deps.logger.warn({ err, workflowId }, 'activity stream read failed');
          } finally {
            busy = false;
          }
        });
        return chain;
      };
      let unsubscribe: () => void;
      try {
        // Stored in this process: sent at once when it is the next seq, else read in order.
        unsubscribe = bus.subscribe(workflowId, (e) => {
          if (!live || closed || e.seq === undefined) return;
          if (!busy && !queued && e.seq === cursor + 1) send(e);
          else if (e.seq > cursor) void catchUp();
        });
      } catch (err) {
        if (err instanceof TooManyActivityListeners)
          throw new TooManyRequestsError('Too many activity streams are open for this workflow');
        throw err;
      }
      // Stored by another process (or a LISTEN reconnect): read after the cursor.
      const offStored = bus.onStored(workflowId, () => void catchUp());
      const keepaliveMs = deps.settings.SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS;
      const timers: NodeJS.Timeout[] = [];
      const stop = () => {
        closed = true;
        for (const t of timers) clearInterval(t);
        unsubscribe();
        offStored();
      };
      res.on('close', stop);
      try {
        const after = resumeAfter(req, q.from);
        const last = await bus.lastSeq(workflowId);
        cursor = after === undefined ? last : after > last ? 0 : after;
      } catch (err) {
        stop();
        throw err;
      }
      if (closed) return; // the client left while the stream was being set up
      open(res);
      res.write('retry: 3000\n\n');
      res.write(
        `event: connected\ndata: ${JSON.stringify({ workflow_id: workflowId, status: row.status, at: deps.now().toISOString(), keepalive_ms: keepaliveMs })}\n\n`,
      );
      live = true;
      timers.push(
        setInterval(() => {
          res.write(`event: keepalive\ndata: ${JSON.stringify({ at: deps.now().toISOString() })}\n\n`);
        }, keepaliveMs),
      );
      // No wake-up crosses processes on SQLite: re-read now and then (an indexed read after the cursor).
      if (bus.recheckMs) timers.push(setInterval(() => void catchUp(), bus.recheckMs));
      await catchUp();
    },
  );

  return r;
}
