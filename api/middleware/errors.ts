// The single error middleware: every failure becomes `{error: string}` (plus spec-named extras) with
// the right status. Stack traces and internal messages are logged, never sent.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, ServiceUnavailableError } from '../../domain/errors.ts';
import { COMPRESSED_BODY_REFUSED } from './body.ts';

export const notFoundHandler: RequestHandler = (_req, res) => {
  res.status(404).json({ error: 'Not found' });
};

export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof AppError) {
    if (err instanceof ServiceUnavailableError && err.retryAfterSeconds)
      res.setHeader('retry-after', String(err.retryAfterSeconds));
    res.status(err.status).json({ error: err.message, ...err.extra });
    return;
  }
  // body-parser errors carry `type` and `status`.
  if (err?.type === 'entity.too.large') {
    const mb = Number(err.limit) / 1024 / 1024;
    res.status(413).json({ error: `Request body too large (limit ${Number.isFinite(mb) ? mb : 1} MB)` });
    return;
  }
  if (err?.type === 'encoding.unsupported') {
    res.status(415).json({ error: COMPRESSED_BODY_REFUSED });
    return;
  }
  if (err?.type === 'entity.parse.failed') {
    res.status(400).json({ error: 'Malformed JSON body' });
    return;
  }
  if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500 && err.expose) {
    res.status(err.status).json({ error: err.message });
    return;
  }
  req.log?.error({ err }, 'unhandled error');
  res.status(500).json({ error: 'Internal server error' });
};
