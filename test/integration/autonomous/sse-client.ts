// A real SSE client for the autonomous activity stream (GET /api/autonomous/workflows/:id/events/stream):
// fetch plus eventsource-parser, collecting every event so a test can wait for the next one of a type.
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Session } from '../../support/session.ts';

export interface Stream {
  status: number;
  events: EventSourceMessage[];
  next(type: string, timeoutMs?: number): Promise<EventSourceMessage>;
  close(): void;
}

export async function openActivityStream(
  baseUrl: string,
  workflowId: string,
  who: Session,
  resume: { lastEventId?: string; from?: number } = {},
): Promise<Stream> {
  const abort = new AbortController();
  const query = resume.from === undefined ? '' : `?from=${resume.from}`;
  const res = await fetch(`${baseUrl}/api/autonomous/workflows/${workflowId}/events/stream${query}`, {
    headers: {
      ...who.headers,
      accept: 'text/event-stream',
      ...(resume.lastEventId === undefined ? {} : { 'last-event-id': resume.lastEventId }),
    },
    signal: abort.signal,
  });
  const events: EventSourceMessage[] = [];
  let seen = 0;
  const parser = createParser({ onEvent: (e) => events.push(e) });
  if (res.ok && res.body) {
    const decoder = new TextDecoder();
    (async () => {
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
          parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted
      }
    })();
  }
  return {
    status: res.status,
    events,
    async next(type, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = events.findIndex((e, k) => k >= seen && e.event === type);
        if (i >= 0) {
          seen = i + 1;
          return events[i]!;
        }
        if (Date.now() > deadline) throw new Error(`no ${type} event in ${timeoutMs} ms`);
        await sleep(10);
      }
    },
    close: () => abort.abort(),
  };
}
