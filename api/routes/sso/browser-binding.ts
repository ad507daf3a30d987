// Binding an OAuth2/OIDC login to the browser that started it (login-CSRF defence). The state value
// alone proves the callback answers a login this service started, not that the browser arriving with
// it is the one that started it: an attacker could start a login, stop at the callback and make a
// victim's browser open that URL, signing the victim in as the attacker. So the start also sets an
// HttpOnly, SameSite=Lax cookie holding the state, scoped to this provider's callback path for the
// state's 10 minutes; the callback requires it to equal the `state` parameter (timing-safe) before the
// state is consumed, and clears it. Lax cookies travel with the top-level GET the provider redirects to.
//
// SAML (issue 25) is bound the same way, on its ACS path and with the RelayState as the value. The IdP
// returns the browser with a cross-site form POST, on which a Lax cookie is not sent: this cookie is
// SameSite=None and therefore Secure (browsers keep Secure cookies on http://localhost too; elsewhere
// SAML needs the service on https, which SAML needs anyway).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { LOGIN_STATE_TTL_MS } from '../../../services/sso/login-state.ts';

export const BINDING_COOKIE = 'sso_login_state';

/** OIDC/OAuth2 logins come back by a GET to their callback, SAML logins by a POST to their ACS. */
export type LoginFlow = 'oauth' | 'saml';

function cookieOptions(req: Request, providerName: string, flow: LoginFlow) {
  const name = encodeURIComponent(providerName);
  return flow === 'saml'
    ? { httpOnly: true, sameSite: 'none' as const, secure: true, path: `/api/sso/acs/${name}` }
    : { httpOnly: true, sameSite: 'lax' as const, secure: req.secure, path: `/api/sso/callback/${name}` };
}

export function setBrowserBinding(
  req: Request,
  res: Response,
  providerName: string,
  rawState: string,
  flow: LoginFlow = 'oauth',
) {
  res.cookie(BINDING_COOKIE, rawState, {
    ...cookieOptions(req, providerName, flow),
    maxAge: LOGIN_STATE_TTL_MS,
  });
}

export function clearBrowserBinding(
  req: Request,
  res: Response,
  providerName: string,
  flow: LoginFlow = 'oauth',
) {
  res.clearCookie(BINDING_COOKIE, cookieOptions(req, providerName, flow));
}

function cookieValue(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === BINDING_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const digest = (v: string) => createHash('sha256').update(v, 'utf8').digest();

/** Whether the request carries the binding cookie of this state. */
export function browserBound(req: Request, rawState: string): boolean {
  const held = cookieValue(req.headers.cookie);
  if (!held || !rawState) return false;
  return timingSafeEqual(digest(held), digest(rawState));
}
