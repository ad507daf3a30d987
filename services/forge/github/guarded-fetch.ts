// The `fetch` the GitHub forge gives Octokit: node's http/https through the egress guard
// (services/egress/guard.ts), so the configured API URL, and every redirect it answers with (job logs
// redirect to blob storage), is checked like any other outbound URL a user can influence: loopback,
// private, link-local and metadata addresses are refused unless `egress.allow_hosts` names them, at
// connect time (no DNS rebinding between check and connect).
//
// Redirects are followed here (at most 3); the Authorization header is dropped when a redirect leaves
// the origin, so the token never reaches a log store or any other host. Response bodies are bounded
// (32 MiB) and every request has a timeout.
import http from 'node:http';
import https from 'node:https';
import type { EgressGuard } from '../../egress/guard.ts';
import { EgressDeniedError } from '../../egress/guard.ts';

const MAX_REDIRECTS = 3;
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface GuardedFetchOptions {
  timeoutMs?: number;
}

type Body = string | Uint8Array | undefined;

function bodyOf(b: unknown): Body {
  if (b == null) return undefined;
  if (typeof b === 'string' || b instanceof Uint8Array) return b;
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  throw new TypeError('guardedFetch: unsupported request body');
}

export function guardedFetch(guard: EgressGuard, opts: GuardedFetchOptions = {}): typeof fetch {
  const timeoutMs = opts.timeoutMs ?? 30_000;

  const once = (url: URL, method: string, headers: Headers, body: Body, signal?: AbortSignal | null) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const refusal = guard.refusal(url.hostname.replace(/^\[|\]$/g, ''));
      if (refusal !== null) return reject(new EgressDeniedError(refusal));
      const mod = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
      if (!mod) return reject(new TypeError(`unsupported protocol ${url.protocol}`));
      const h: Record<string, string> = {};
      headers.forEach((v, k) => {
        h[k] = v;
      });
      if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
      const req = mod.request(url, {
        method,
        headers: h,
        agent: guard.agents[url.protocol as 'http:' | 'https:'],
        timeout: timeoutMs,
        signal: signal ?? undefined,
      });
      req.on('timeout', () => req.destroy(new Error(`request to ${url.host} timed out`)));
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) {
            res.destroy(new Error(`response from ${url.host} larger than ${MAX_BODY_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.end(body);
    });

  const guarded = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    let url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    let method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    let body = bodyOf(init.body);
    for (let hop = 0; ; hop++) {
      const res = await once(url, method, headers, body, init.signal);
      const location = res.headers.location;
      if (REDIRECTS.has(res.status) && location && init.redirect !== 'manual') {
        if (hop >= MAX_REDIRECTS) throw new TypeError(`too many redirects from ${url.host}`);
        const next = new URL(location, url);
        if (next.origin !== url.origin) headers.delete('authorization');
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers.delete('content-type');
        }
        url = next;
        continue;
      }
      const out = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        if (v === undefined) continue;
        out.set(k, Array.isArray(v) ? v.join(', ') : v);
      }
      const empty = res.status === 204 || res.status === 205 || res.status === 304 || method === 'HEAD';
      const response = new Response(empty ? null : new Uint8Array(res.body), {
        status: res.status,
        headers: out,
      });
      Object.defineProperty(response, 'url', { value: url.href });
      return response;
    }
  };
  return guarded as typeof fetch;
}
