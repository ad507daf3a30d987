// `X-Content-Type-Options: nosniff` on every answer of the server (issue 25 item 6): JSON, errors,
// 404s, SSE, the web application and the model proxy (which runs ahead of Express and calls
// setNoSniff itself). Set before any handler runs, so writeHead's own headers merge with it.
import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

export function setNoSniff(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

export const noSniff: RequestHandler = (_req, res, next) => {
  setNoSniff(res);
  next();
};
