#!/usr/bin/env node
// The baseline's "agent" (bench/remote/baseline.ts), in its own process like the real agent: holds one
// HTTP long poll (GET /poll) at a time; for every message it receives it stamps `received_at`, then
// at once POSTs `/line` {id, received_at, printed_at} (the analogue of the agent sending a CLI output
// line), the way the real agent's transport does it (node:http, keep-alive). Times are epoch ms with
// sub-millisecond precision (performance.timeOrigin + performance.now()), comparable across processes.
import http from 'node:http';

const base = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const now = () => performance.timeOrigin + performance.now();

function request(method, path, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        agent,
        headers: data
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
          : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

process.stdout.write('ready\n');
for (;;) {
  let text;
  try {
    text = await request('GET', '/poll');
  } catch {
    process.exit(0); // the bench closed the server
  }
  const receivedAt = now();
  if (!text) continue;
  const { id } = JSON.parse(text);
  if (id === 'stop') process.exit(0);
  await request('POST', '/line', { id, received_at: receivedAt, printed_at: now() });
}
