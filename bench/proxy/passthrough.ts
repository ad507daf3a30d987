/**
 * The baseline every proxy benchmark is judged against (shared/PERF.md): the thinnest correct Node
 * pass-through. http.createServer + http.request on a keep-alive agent, both bodies piped, the
 * Authorization header swapped, nothing else: no logging, no header filtering, no usage reading.
 * Anything our proxy does beyond this is its overhead.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function startPassthrough(
  targetUrl: string,
  apiKey = 'sk-bench-real-key',
): Promise<RunningServer> {
  const target = new URL(targetUrl);
  const basePath = target.pathname.replace(/\/+$/, '');
  const agent = new http.Agent({ keepAlive: true });
  const authorization = `Bearer ${apiKey}`;

  const server = http.createServer((req, res) => {
    const upstream = http.request(
      {
        hostname: target.hostname,
        port: target.port,
        path: basePath + req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host, authorization },
        agent,
      },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return listen(server, () => agent.destroy());
}

/** Listens on an ephemeral 127.0.0.1 port; close() also drops keep-alive connections. */
export async function listen(server: http.Server, onClose?: () => void): Promise<RunningServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      onClose?.();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
