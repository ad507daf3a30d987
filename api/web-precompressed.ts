// Serves the precompressed twins of the web application's hashed assets (web/precompress.ts writes
// `<name>.br` and `<name>.gz` at build time): for GET/HEAD /assets/<name>, the Brotli twin when the
// request's Accept-Encoding allows br, else the gzip twin when it allows gzip, else nothing here (the
// plain file is served by express.static next). Every asset answer carries Vary: Accept-Encoding, so a
// shared cache never hands a compressed body to a client that did not ask for it.
//
// Brotli is preferred over gzip whenever both are acceptable at the same weight: browsers list gzip
// first ("gzip, deflate, br, zstd"), so content negotiation by header order alone (Express's
// req.acceptsEncodings) would always pick gzip. A missing twin (a file below the size threshold, or one
// compression did not shrink) falls through to the plain file.
import { statSync } from 'node:fs';
import path from 'node:path';
import type { RequestHandler } from 'express';

export type PrecompressedEncoding = 'br' | 'gzip';

/** Asset names as Vite writes them: one path segment, no leading dot (linear-time check). */
const ASSET_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * The precompressed encoding to send for an Accept-Encoding header, or null for the plain file.
 * RFC 9110 12.5.3: a coding with q=0 is refused; `*` stands for codings not listed; no header means
 * no preference, which we read as identity (the safe answer).
 */
export function chooseEncoding(header: string | undefined): PrecompressedEncoding | null {
  if (!header) return null;
  const weights = new Map<string, number>();
  for (const part of header.split(',', 64)) {
    const [rawName, ...params] = part.split(';');
    const name = rawName!.trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k?.trim().toLowerCase() === 'q') {
        const n = Number(v?.trim());
        q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
      }
    }
    weights.set(name, q);
  }
  const star = weights.get('*') ?? 0;
  const weight = (coding: string) =>
    weights.get(coding) ?? (coding === 'gzip' ? weights.get('x-gzip') : undefined) ?? star;
  const br = weight('br');
  const gzip = weight('gzip');
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return null;
}

const TWIN: Record<PrecompressedEncoding, string> = { br: '.br', gzip: '.gz' };

/** Mounted at /assets before express.static; `setHeaders` adds the asset cache headers. */
export function precompressedAssets(
  assetsDir: string,
  setHeaders: (res: Parameters<RequestHandler>[1]) => void,
): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    res.vary('Accept-Encoding');
    const name = req.path.slice(1);
    if (!ASSET_NAME.test(name)) return next();
    const encoding = chooseEncoding(req.headers['accept-encoding']);
    if (!encoding) return next();
    const file = path.join(assetsDir, name + TWIN[encoding]);
    let found = false;
    try {
      // The plain file must exist too: a stray twin never answers for a removed asset.
      found = statSync(file).isFile() && statSync(path.join(assetsDir, name)).isFile();
    } catch {
      found = false;
    }
    if (!found) return next();
    res.type(path.extname(name));
    res.setHeader('Content-Encoding', encoding);
    setHeaders(res);
    res.sendFile(file, { dotfiles: 'deny', cacheControl: false }, (err) => {
      if (!err || res.headersSent) return;
      // Gone between the stat and the send (a rebuild emptied web/dist): answer as if there were no twin.
      res.removeHeader('Content-Encoding');
      res.removeHeader('Content-Type');
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return next();
      next(err);
    });
  };
}
