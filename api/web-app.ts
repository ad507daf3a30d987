// Serves the single-page application built into web/dist (npm run build:web), mounted by api/app.ts
// after every API router: /assets/* are content-hashed files (cached for a year, immutable, sent
// as their build-time .br/.gz twin when accepted: api/web-precompressed.ts); any
// other GET/HEAD outside /api answers index.html (no-cache) so the client router takes over, with a
// strict Content-Security-Policy. /api/* never reaches here as HTML: unknown API paths stay JSON 404.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, Router } from 'express';
import { precompressedAssets } from './web-precompressed.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
/** web/dist next to the sources (api/), or two levels up when running from `npm run build` output (dist/api/). */
export const WEB_DIST =
  [path.resolve(here, '../web/dist'), path.resolve(here, '../../web/dist')].find((d) => existsSync(d)) ??
  path.resolve(here, '../web/dist');

const CSP_BASE = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
];

export const WEB_CSP = CSP_BASE.join('; ');

/**
 * The policy with the other instances (SVC_WEB_CONNECT_ORIGINS) added to `connect-src`, each as its
 * http(s) origin and the matching ws(s) one: a terminal closed with 3010 reconnects to its owner there.
 */
export function webCsp(connectOrigins: readonly string[] = []): string {
  if (connectOrigins.length === 0) return WEB_CSP;
  const extra = connectOrigins.flatMap((u) => {
    const { origin, protocol } = new URL(u);
    return [origin, origin.replace(protocol, protocol === 'https:' ? 'wss:' : 'ws:')];
  });
  return CSP_BASE.map((d) => (d === "connect-src 'self'" ? [d, ...extra].join(' ') : d)).join('; ');
}

const isApiPath = (p: string) => p === '/api' || p.startsWith('/api/');

export function webAppRouter(distDir = WEB_DIST, opts: { connectOrigins?: readonly string[] } = {}): Router {
  const r = Router();
  const csp = webCsp(opts.connectOrigins);
  const assetHeaders = (res: { setHeader(name: string, value: string): unknown }) =>
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  // The .br/.gz twins written at build time (web/precompress.ts) when the browser accepts them.
  r.use('/assets', precompressedAssets(path.join(distDir, 'assets'), assetHeaders));
  r.use(
    '/assets',
    express.static(path.join(distDir, 'assets'), {
      index: false,
      immutable: true,
      maxAge: '365d',
      setHeaders: assetHeaders,
    }),
  );
  // A missing asset is a plain 404 (never the HTML: a stale page asking for an old hash must fail loudly).
  r.use('/assets', (_req, res) => {
    res.status(404).json({ error: 'Not found' });
  });
  // index.html is re-read only when the build changes it (mtime), so a rebuild needs no restart.
  let cached: { mtimeMs: number; body: Buffer } | undefined;
  const indexHtml = (): Buffer | undefined => {
    const file = path.join(distDir, 'index.html');
    if (!existsSync(file)) return undefined;
    const { mtimeMs } = statSync(file);
    if (!cached || cached.mtimeMs !== mtimeMs) cached = { mtimeMs, body: readFileSync(file) };
    return cached.body;
  };
  const page: RequestHandler = (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || isApiPath(req.path)) return next();
    const body = indexHtml();
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (!body) {
      res
        .status(503)
        .type('text/plain')
        .send('The web application is not built: run `npm run build:web` (npm start builds it).\n');
      return;
    }
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.status(200).type('html').send(body);
  };
  r.use(page);
  return r;
}
