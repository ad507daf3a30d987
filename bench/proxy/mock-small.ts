/**
 * The benchmark's upstream (shared/PERF.md): an OpenAI-compatible endpoint answering every request
 * with the same small chat-completion JSON, so that timings measure the proxy path, not the provider.
 * With `?stream=1` it answers a small server-sent-event stream instead (time-to-first-byte runs).
 */
import http from 'node:http';
import { listen, type RunningServer } from './passthrough.ts';

const REPLY = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
});
const HEADERS = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(REPLY) };

/** `?stream=1`: a short server-sent-event stream, first event at once, the rest STREAM_GAP_MS later. */
const STREAM_GAP_MS = 2;
const chunk = (delta: unknown, usage: unknown = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-model', choices: delta === null ? [] : [{ index: 0, delta, finish_reason: null }], usage })}\n\n`;
const FIRST_EVENT = chunk({ role: 'assistant', content: 'o' });
const REST_EVENTS =
  chunk({ content: 'k' }) +
  chunk(null, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }) +
  'data: [DONE]\n\n';
const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

export function startSmallMock(): Promise<RunningServer> {
  const server = http.createServer((req, res) => {
    // Drain the request body before answering, as a real provider does.
    req.resume();
    req.on('end', () => {
      if (req.url?.includes('stream=1')) {
        res.writeHead(200, STREAM_HEADERS);
        res.write(FIRST_EVENT);
        setTimeout(() => res.end(REST_EVENTS), STREAM_GAP_MS);
        return;
      }
      res.writeHead(200, HEADERS);
      res.end(REPLY);
    });
  });
  server.keepAliveTimeout = 60_000;
  return listen(server);
}
