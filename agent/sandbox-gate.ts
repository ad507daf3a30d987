// The sandbox's only way out (policy.ts "network"): an HTTP server on a Unix socket, outside the
// sandbox, that forwards requests under the model proxy's path prefix to the real proxy and answers
// everything else 403. The sandbox reaches it through sandbox-bridge.mjs on a loopback port of its own
// network namespace, so a sandboxed process can call the model proxy and nothing else: not the API's
// other routes, not the Temporal port, not the database, not another host.
//
// Checked per request: an origin-form target (`/path`, never `http://host/...` or `*`), the path equal to
// the prefix or below it, and no dot segments, encoded dots or slashes, or backslashes that a server
// behind could resolve to another route. The Host header is set to the upstream's; hop-by-hop headers
// are not forwarded. The response streams back as it arrives (SSE).
import http from 'node:http';
import https from 'node:https';

export interface ModelProxyGate {
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

/** Whether a request target stays under `prefix` (a path such as `/api/remote/llm-proxy`). */
export function allowedTarget(target: string | undefined, prefix: string): boolean {
  if (!target?.startsWith('/')) return false;
  const pathname = target.split('?', 1)[0]!;
  if (prefix !== '/' && pathname !== prefix && !pathname.startsWith(`${prefix}/`)) return false;
  if (pathname.includes('\\') || /%2e|%2f|%5c/i.test(pathname)) return false;
  return !pathname.split('/').some((segment) => segment === '.' || segment === '..');
}

/** Starts a gate in front of `upstreamBaseUrl` (the proxy base URL the CLI would otherwise be given). */
export function openModelProxyGate(upstreamBaseUrl: string, socketPath: string): ModelProxyGate {
  const upstream = new URL(upstreamBaseUrl);
  const prefix = upstream.pathname.replace(/\/+$/, '') || '/';
  const client = upstream.protocol === 'https:' ? https : http;
  const agent = new client.Agent({ keepAlive: true, maxSockets: 16 });
  const server = http.createServer((req, res) => {
    if (!allowedTarget(req.url, prefix)) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `the sandbox reaches only the model proxy (${prefix})` }));
      req.resume();
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers))
      if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    headers.host = upstream.host;
    const out = client.request(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname.replace(/^\[|\]$/g, ''),
        port: upstream.port || (upstream.protocol === 'https:' ? 443 : 80),
        method: req.method,
        path: req.url,
        headers,
        agent,
      },
      (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    out.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `the model proxy could not be reached: ${err.message}` }));
      }
    });
    req.pipe(out);
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
  });
  // A Unix socket is bound and listening when listen() returns (connections wait in the backlog until
  // this loop accepts them), so the sandbox may start at once. A later error only fails its calls.
  server.on('error', () => undefined);
  server.listen(socketPath);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          agent.destroy();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
