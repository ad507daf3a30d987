// GET /api/autonomous/workflows/:id/events/stream (spec document 2, "Events" 2): Server-Sent Events of
// what the workflow's agent does, from the process-local activity bus
// (services/autonomous/activity-bus.ts). Frames:
//   event: connected     at once, with the workflow id and status;
//   event: keepalive     a visible event every SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS (default 30 s,
//                        LIMITS.streamKeepaliveSeconds), so clients see the stream is alive;
//   event: <type>        every bus event of the workflow: tool_use, assistant_text, usage, retry,
//                        system, error, milestone_updated, with the event's fields as JSON data.
// Never sent: an assistant_text whose text is empty or whitespace, and any thinking estimate (fields
// are copied from an allow-list; a field or subtype naming thinking is dropped). The stream is
// observability only (milestones and sessions are the record) and process-local.
// Bounds: the bus refuses a subscriber past its per-workflow cap (TooManyActivityListeners -> 429,
// before any byte of the stream is sent); the subscription ends when the client goes away.
import type { Response } from 'express';
import { Router } from 'express';
import { TooManyRequestsError } from '../../../domain/errors.ts';
import {
  type AutonomousActivityEvent,
  autonomousActivityBus,
  TooManyActivityListeners,
} from '../../../services/autonomous/activity-bus.ts';
import type { AppDeps } from '../../deps.ts';
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

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getAutonomousWorkflowsEventsStream = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags: ['autonomous'],
  responses: { 200: "Server-sent events (text/event-stream): the workflow's activity" },
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
      const workflowId = row.workflowId;
      const queued: string[] = [];
      let live = false;
      let unsubscribe: () => void;
      try {
        unsubscribe = autonomousActivityBus.subscribe(workflowId, (e) => {
          const frame = activityFrame(e);
          if (!frame) return;
          if (live) res.write(frame);
          else queued.push(frame);
        });
      } catch (err) {
        if (err instanceof TooManyActivityListeners)
          throw new TooManyRequestsError('Too many activity streams are open for this workflow');
        throw err;
      }
      const keepaliveMs = deps.settings.SVC_AUTONOMOUS_STREAM_KEEPALIVE_MS;
      let timer: NodeJS.Timeout | undefined;
      res.on('close', () => {
        clearInterval(timer);
        unsubscribe();
      });
      open(res);
      res.write('retry: 3000\n\n');
      res.write(
        `event: connected\ndata: ${JSON.stringify({ workflow_id: workflowId, status: row.status, at: deps.now().toISOString(), keepalive_ms: keepaliveMs })}\n\n`,
      );
      live = true;
      for (const f of queued.splice(0)) res.write(f);
      timer = setInterval(() => {
        res.write(`event: keepalive\ndata: ${JSON.stringify({ at: deps.now().toISOString() })}\n\n`);
      }, keepaliveMs);
    },
  );

  return r;
}
