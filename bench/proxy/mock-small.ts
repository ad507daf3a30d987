/**
 * The benchmark's upstream (shared/PERF.md): an OpenAI-compatible endpoint answering every request
 * with the same small chat-completion JSON, so that timings measure the proxy path, not the provider.
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

export function startSmallMock(): Promise<RunningServer> {
  const server = http.createServer((req, res) => {
    // Drain the request body before answering, as a real provider does.
    req.resume();
    req.on('end', () => {
      res.writeHead(200, HEADERS);
      res.end(REPLY);
    });
  });
  server.keepAliveTimeout = 60_000;
  return listen(server);
}
