// Session authentication and the guard API every router uses.
//
//   router.use(authenticate(deps));                       // 401 without a valid session
//   router.get('/x', requirePermission('view_users'), h); // 403 without the permission
//   router.post('/y', requireAdmin, h);                   // system admin or tenant admin
//   router.delete('/z', requireSystemAdmin, h);           // platform_admin or legacy admin
//
// The session token is read from the cookie `session_token`, then `Authorization: Bearer`, then the
// `token` query parameter; the first one present is the one used. A session is found by the SHA-256 of
// the token in one indexed query joined with the user, its tenant and its extra permissions;
// permissions are the cached role template plus those extras. A usable result is kept in the
// per-instance session cache (db/auth-session-cache.ts: LRU + TTL, dropped on every instance by
// invalidateAuthSessions when a logout, deactivation, role change or tenant suspension commits), so
// a repeat request costs no query; expiry is still checked on every request.

import type { Request, RequestHandler } from 'express';
import { type AuthSessionCache, authSessionCache, sqliteCacheFresh } from '../../db/auth-session-cache.ts';
import { authSessionsRepository } from '../../db/repositories/auth-sessions.ts';
import {
  allowedWhilePasswordChangeRequired,
  canAccessOwned,
  canAdministerMachine,
  effectivePermissions,
  hasPermission,
  isAdministrator,
  isSystemAdmin,
} from '../../domain/access.ts';
import { bearerTokenOf } from '../../domain/bearer.ts';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors.ts';
import { isRole, type Permission, type Role } from '../../domain/permissions.ts';
import { hashSessionToken, plausibleSessionToken } from '../../domain/session-token.ts';
import { tenantRefusal } from '../../domain/tenants.ts';
import { roleTemplates } from '../../services/access-caches.ts';
import type { AppDeps } from '../../services/deps.ts';
import { SESSION_COOKIE } from '../../services/session-cookie.ts';

export interface AuthUser {
  id: number;
  username: string;
  email: string | null;
  role: Role;
  tenantId: number | null;
  /** System administrator (platform_admin or legacy admin): global authority. Tenant admins are false. */
  isAdmin: boolean;
}

export interface AuthContext {
  user: AuthUser;
  permissions: ReadonlySet<Permission>;
  sessionId: number;
}

declare global {
  namespace Express {
    interface Request {
      /** Set by `authenticate`; present on every route mounted behind it. */
      auth: AuthContext;
    }
  }
}

/** Where the token came from (tests and logs; never the token itself). */
export type TokenSource = 'cookie' | 'bearer' | 'query';

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    let v = part.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    try {
      return decodeURIComponent(v);
    } catch {
      return v;
    }
  }
  return undefined;
}

/** The session token in priority order: cookie, then Bearer header, then `?token=`. */
export function sessionTokenOf(req: Request): { token: string; source: TokenSource } | undefined {
  const fromCookie = cookieValue(req.headers.cookie, SESSION_COOKIE);
  if (fromCookie) return { token: fromCookie, source: 'cookie' };
  const bearer = bearerTokenOf(req.headers.authorization);
  if (bearer) return { token: bearer, source: 'bearer' };
  const q = req.query?.token;
  if (typeof q === 'string' && q) return { token: q, source: 'query' };
  return undefined;
}

export type SessionResolution =
  | { ok: true; auth: AuthContext; mustChangePassword: boolean }
  | { ok: false; error: UnauthorizedError | ForbiddenError };

const INVALID = 'Invalid or expired session';
const repos = new WeakMap<AppDeps, ReturnType<typeof authSessionsRepository>>();

/** Looks the request's session up and decides whether it is usable. Never throws for a bad token. */
export async function resolveSession(deps: AppDeps, req: Request): Promise<SessionResolution> {
  const found = sessionTokenOf(req);
  if (!found) return { ok: false, error: new UnauthorizedError('Authentication required') };
  if (!plausibleSessionToken(found.token)) return { ok: false, error: new UnauthorizedError(INVALID) };
  let repo = repos.get(deps);
  if (!repo) {
    repo = authSessionsRepository(deps.database);
    repos.set(deps, repo);
  }
  const tokenHash = hashSessionToken(found.token);
  const cache = sessionCacheOf(deps);
  if (deps.database.dialect === 'sqlite') await sqliteCacheFresh(deps.database);
  const hit = cache.get(tokenHash);
  if (hit) {
    if (hit.expiresAt <= deps.now().getTime()) return { ok: false, error: new UnauthorizedError(INVALID) };
    const templates = roleTemplates(deps);
    // Same role templates as when cached (the 60 s template cache did not reload): reuse as is.
    if (templates === hit.templates) return hit.resolution;
  }
  const generation = cache.generation;
  const [p, templates] = await Promise.all([repo.findByTokenHash(tokenHash), roleTemplates(deps)]);
  if (!p?.sessionActive || p.expiresAt.getTime() <= deps.now().getTime())
    return { ok: false, error: new UnauthorizedError(INVALID) };
  if (p.user.deletedAt || !p.user.isActive)
    return { ok: false, error: new UnauthorizedError('Account is disabled') };
  const refusal = tenantRefusal(p.tenant);
  if (refusal) return { ok: false, error: new ForbiddenError(refusal) };
  // A role this build does not know gets no permissions at all (fails closed).
  const role = (isRole(p.user.role) ? p.user.role : 'readonly') as Role;
  const permissions = isRole(p.user.role)
    ? effectivePermissions(role, p.extraPermissions, templates)
    : new Set<Permission>();
  const resolution: SessionResolution = {
    ok: true,
    mustChangePassword: p.user.mustChangePassword,
    auth: {
      sessionId: p.sessionId,
      permissions,
      user: {
        id: p.user.id,
        username: p.user.username,
        email: p.user.email,
        role,
        tenantId: p.user.tenantId,
        isAdmin: isSystemAdmin({ role }),
      },
    },
  };
  cache.set(
    tokenHash,
    { resolution, expiresAt: p.expiresAt.getTime(), templates },
    { authSessionId: p.sessionId, userId: p.user.id, tenantId: p.user.tenantId },
    generation,
  );
  return resolution;
}

/** A cached usable session: the resolution, its expiry, and the role templates it was computed with. */
interface CachedSession {
  resolution: SessionResolution;
  expiresAt: number;
  templates: unknown;
}

const sessionCacheOf = (deps: AppDeps): AuthSessionCache<CachedSession> =>
  authSessionCache<CachedSession>(deps.database, {
    max: deps.settings.SVC_AUTH_SESSION_CACHE_SIZE,
    ttlMs: deps.settings.SVC_AUTH_SESSION_CACHE_TTL_MS,
  });

/** Path of the request inside the whole app (routers see a shortened req.path). */
const fullPath = (req: Request) => (req.originalUrl || req.url).split('?')[0]!;

/**
 * Router-level authentication: sets `req.auth` or answers 401 `{error}`; a user who must change the
 * password gets 403 everywhere except the six endpoints the spec lists.
 */
export function authenticate(deps: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    if ((req as Partial<Request>).auth) return next();
    const r = await resolveSession(deps, req);
    if (!r.ok) throw r.error;
    if (r.mustChangePassword && !allowedWhilePasswordChangeRequired(req.method, fullPath(req)))
      throw new ForbiddenError('Password change required: change your password before using this endpoint', {
        must_change_password: true,
      });
    req.auth = r.auth;
    next();
  };
}

const authOf = (req: Request): AuthContext => {
  const a = (req as Partial<Request>).auth;
  if (!a) throw new UnauthorizedError('Authentication required');
  return a;
};

/** platform_admin or legacy admin; 403 otherwise. */
export const requireSystemAdmin: RequestHandler = (req, _res, next) => {
  if (!isSystemAdmin(authOf(req).user)) throw new ForbiddenError('System administrator access required');
  next();
};

/** System admin, tenant admin, or a holder of admin_access; 403 otherwise. */
export const requireAdmin: RequestHandler = (req, _res, next) => {
  const a = authOf(req);
  if (!isAdministrator(a.user, a.permissions)) throw new ForbiddenError('Admin access required');
  next();
};

/** The permission (admin_access passes every check); 403 otherwise. */
export function requirePermission(p: Permission): RequestHandler {
  return (req, _res, next) => {
    if (!hasPermission(authOf(req).permissions, p)) throw new ForbiddenError(`Permission required: ${p}`);
    next();
  };
}

/** Whether the caller is an administrator (for routes whose answer depends on it). */
export const callerIsAdministrator = (req: Request) => {
  const a = authOf(req);
  return isAdministrator(a.user, a.permissions);
};

/**
 * Ownership (spec: the session owner; the admin role bypasses). 403 unless the caller owns the
 * resource, is a system admin, or is a tenant admin of the resource's tenant.
 */
export function assertCanAccessOwned(
  req: Request,
  ownerId: number | null | undefined,
  resourceTenantId?: number | null,
) {
  if (!canAccessOwned(authOf(req).user, ownerId, resourceTenantId))
    throw new ForbiddenError('Access denied: not the owner');
}

/** Machine ownership: a machine-admin assignment, or a system admin; 403 otherwise. */
export function assertMachineAdmin(req: Request, assignment: 'user' | 'admin' | null | undefined) {
  if (!canAdministerMachine(authOf(req).user, assignment))
    throw new ForbiddenError('Machine administrator access required');
}
