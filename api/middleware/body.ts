// Request bodies and what they may cost before the caller is known (issue 25 item 4). One global JSON
// parser with a small limit and no decompression serves every ordinary route; the few routes that
// need more take their body themselves, after their own authentication:
//
// - Ordinary routes: JSON up to JSON_LIMIT_BYTES (1 MB), read only when Content-Type is JSON. A body
//   with a Content-Encoding (gzip, deflate, br) is refused with 415 before a byte of it is read: the
//   unauthenticated routes (login, SSO, agent registration) never inflate anything, and no client of
//   ours compresses its JSON to an ordinary route.
// - AFTER_AUTH_ROUTES (an agent's poll and terminal output; a workspace session's messages and a
//   remote session's chat, 1,000,000 characters each; an SSO provider's registration with inline SAML
//   metadata of up to 1 MiB; a batch of autonomous workflows, up to 50 requirements of 20,000 characters): skipped by the global parser; the route calls `readLargeJson` once its
//   caller is authenticated, which takes up to LARGE_JSON_LIMIT_BYTES, still without decompression.
// - The streamed uploads (/api/upload/messages, /batch) read their own stream after the upload key
//   check and are the one place where a compressed body is inflated (api/routes/upload-stream.ts,
//   bounded by decoded size and inflation ratio: boundedInflate below).
// - The model proxy reads its own body ahead of Express after its token check (api/routes/remote/
//   llm-proxy.ts) and forwards it as sent, never inflating it.
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../../domain/errors.ts';

export const JSON_LIMIT_BYTES = 1024 * 1024;
export const LARGE_JSON_LIMIT_BYTES = 50 * 1024 * 1024;
/** A compressed upload may inflate this many times its compressed size (JSON rows compress ~10-30x). */
export const MAX_INFLATION_RATIO = 30;
/** Decoded bytes allowed whatever the ratio: a small body may compress better than large ones do. */
export const INFLATION_ALLOWANCE_BYTES = 1024 * 1024;

export const COMPRESSED_BODY_REFUSED =
  'Compressed request bodies (Content-Encoding) are not accepted on this route; send the body uncompressed';

/** Routes that parse their JSON body after their authentication, with the large limit. */
const AFTER_AUTH_ROUTES = [
  /^\/api\/remote\/agent\/message\/?$/i,
  /^\/api\/remote\/agent\/terminals\/[^/]+\/?$/i,
  /^\/api\/sessions\/[^/]+\/messages\/?$/i,
  /^\/api\/sso\/providers\/?$/i,
  /^\/api\/remote\/sessions\/[^/]+\/chat\/?$/i,
  /^\/api\/autonomous\/workflows\/?$/i,
];

/**
 * A JSON parser that refuses a declared Content-Length over `limit` at once (and closes the
 * connection): body-parser would first read the whole body to discard it.
 */
function jsonParser(limit: number): RequestHandler {
  const parse = express.json({ limit, inflate: false });
  return (req, res, next) => {
    if (Number(req.get('content-length') ?? 0) > limit) {
      res.set('connection', 'close');
      return next(new AppError(413, `Request body too large (limit ${limit / 1024 / 1024} MB)`));
    }
    parse(req, res, next);
  };
}

const smallJson = jsonParser(JSON_LIMIT_BYTES);
const largeJson = jsonParser(LARGE_JSON_LIMIT_BYTES);

/** The app's JSON parser: every route but AFTER_AUTH_ROUTES (they call readLargeJson themselves). */
export const jsonBody: RequestHandler = (req, res, next) => {
  if (req.method === 'POST' && AFTER_AUTH_ROUTES.some((re) => re.test(req.path))) return next();
  smallJson(req, res, next);
};

/** Reads the JSON body of an AFTER_AUTH_ROUTES route; call it once the caller is authenticated. */
export function readLargeJson(req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) =>
    largeJson(req, res, (err?: unknown) => (err ? reject(err) : resolve())),
  );
}

/** An error for a body whose inflated size passed its limit or ratio. */
export class InflationLimitError extends Error {
  constructor(readonly decoded: number) {
    super('The compressed body inflates beyond its limit');
  }
}

/**
 * `req` inflated by `inflate`, bounded: fails with InflationLimitError once the decoded bytes exceed
 * maxBytes or MAX_INFLATION_RATIO times the compressed bytes read so far (beyond
 * INFLATION_ALLOWANCE_BYTES). A 46 KB gzip bomb of a 50 MB body stops after about 5.6 MB decoded.
 */
export function boundedInflate(req: Readable, inflate: Transform, maxBytes: number): Readable {
  let compressed = 0;
  let decoded = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      compressed += chunk.length;
      done(null, chunk);
    },
  });
  const guard = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      decoded += chunk.length;
      const ratioCap = INFLATION_ALLOWANCE_BYTES + MAX_INFLATION_RATIO * compressed;
      if (decoded > maxBytes || decoded > ratioCap) return done(new InflationLimitError(decoded));
      done(null, chunk);
    },
  });
  // pipeline, not pipe: a client that goes away (or a refusal) ends every stream of the chain.
  return pipeline(req, count, inflate, guard, () => {});
}

/**
 * The body of `req`, decoded when its Content-Encoding is gzip or deflate (boundedInflate: at most
 * `maxBytes` decoded); 415 for another encoding. Call it only once the caller is authenticated.
 */
export function decodedBody(req: Request, maxBytes: number): AsyncIterable<Buffer> {
  const encoding = (req.get('content-encoding') ?? 'identity').toLowerCase();
  if (encoding === 'identity') return req;
  const inflate = encoding === 'gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : undefined;
  if (inflate) return boundedInflate(req, inflate, maxBytes);
  throw new AppError(415, `Unsupported Content-Encoding "${encoding}" (use gzip, deflate or none)`);
}
