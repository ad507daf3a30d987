// The `session_token` cookie: HttpOnly, SameSite=Lax, Path=/, Secure when the request is HTTPS. Behind
// a proxy, Express derives req.secure from X-Forwarded-Proto only when the proxy is trusted
// (SVC_TRUST_PROXY, applied in app.ts), so a client cannot fake it.
import type { CookieOptions, Request, Response } from 'express';

/** The browser session's cookie name (the auth middleware reads it, sign-in sets it). */
export const SESSION_COOKIE = 'session_token';

const options = (req: Request): CookieOptions => ({
  httpOnly: true,
  sameSite: 'lax',
  secure: req.secure,
  path: '/',
});

export function setSessionCookie(req: Request, res: Response, token: string, expiresAt: Date, now: Date) {
  res.cookie(SESSION_COOKIE, token, {
    ...options(req),
    maxAge: Math.max(0, expiresAt.getTime() - now.getTime()),
  });
}

export function clearSessionCookie(req: Request, res: Response) {
  res.clearCookie(SESSION_COOKIE, options(req));
}
