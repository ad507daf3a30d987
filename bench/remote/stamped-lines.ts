// The SSE reader of bench/remote (run.ts and agents.ts): a session's output stream, read with the given
// auth headers; every stamp-cli.mjs answer line (`{type: 'assistant', bench, received_at, printed_at}`)
// goes to `onLine` with the time it arrived (`sseAt`, epoch ms like the CLI's stamps).
import { EventSource } from 'eventsource';

export interface StampedLine {
  /** The message content the CLI answered. */
  bench: string;
  received_at: number;
  printed_at: number;
  sseAt: number;
}

export function readStampedLines(
  url: string,
  sessionId: string,
  headers: Record<string, string>,
  onLine: (line: StampedLine) => void,
): EventSource {
  const es = new EventSource(`${url}/api/remote/sessions/${sessionId}/output/stream`, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  es.addEventListener('output', (e) => {
    const sseAt = performance.timeOrigin + performance.now();
    const event = JSON.parse(e.data);
    if (event.stream !== 'stdout') return;
    const line = JSON.parse(event.data);
    if (line.type === 'assistant' && typeof line.bench === 'string') onLine({ ...line, sseAt });
  });
  return es;
}
