// A refused SSO login start, OAuth2/OIDC callback or SAML ACS post, answered to a person's browser. The
// refusal is audited and thrown by login.ts / saml.ts as usual; this error middleware (mounted at the
// end of those routers)
// turns it, for a top-level browser navigation only, into 302 `/login?sso_error=<code>` so the login
// page says what went wrong (domain/sso/browser-errors.ts holds the codes and the words). API clients
// (fetch, curl: no `Sec-Fetch-Mode: navigate`, no preference for HTML) keep the JSON `{error}` with its
// status. Errors that are not refusals (AppError) go on to the JSON error middleware untouched.
import type { ErrorRequestHandler, Request } from 'express';
import { AppError } from '../../../domain/errors.ts';
import { ssoErrorCode } from '../../../domain/sso/browser-errors.ts';

/** A browser opening the URL as a page (the provider's redirect, a clicked link). */
export function isBrowserNavigation(req: Request): boolean {
  const mode = req.headers['sec-fetch-mode'];
  if (mode !== undefined) return mode === 'navigate';
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}

export const ssoBrowserRefusal: ErrorRequestHandler = (err, req, res, next) => {
  if (!(err instanceof AppError) || res.headersSent || !isBrowserNavigation(req)) return next(err);
  res.setHeader('cache-control', 'no-store');
  // 303 after the SAML ACS POST: the browser then GETs the login page.
  res.redirect(req.method === 'GET' ? 302 : 303, `/login?sso_error=${ssoErrorCode(err.status, err.message)}`);
};
