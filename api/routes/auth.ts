// Authentication endpoints (document 1, "Authentication endpoints") and GET /api/password-policy.
// Public: POST /api/auth/login, GET /api/auth/check. Everything else needs a session; all of these
// are on the must_change_password allowlist.
import { Router } from 'express';
import { z } from 'zod';
import { authSessionsRepository } from '../../db/repositories/auth-sessions.ts';
import { usersRepository } from '../../db/repositories/users.ts';
import { BadRequestError, UnauthorizedError } from '../../domain/errors.ts';
import { passwordPolicy, passwordProblem } from '../../domain/password-policy.ts';
import { hashPassword, verifyPassword } from '../../domain/passwords.ts';
import { securitySettings } from '../../services/access-caches.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { LoginLockedError, login, warmDummyHash } from '../../services/login.ts';
import { clearSessionCookie, setSessionCookie } from '../../services/session-cookie.ts';
import { iso } from '../json-dates.ts';
import { authenticate, resolveSession } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const REQUIRED = 'Username and password are required';
const loginBody = z.object({
  username: z.string({ error: REQUIRED }).trim().min(1, REQUIRED),
  password: z.string({ error: REQUIRED }).min(1, REQUIRED),
});
const changeBody = z.object({
  current_password: z.string().min(1),
  new_password: z.string().min(1),
});

// Answers (documented in /api/openapi.json; api/openapi/endpoint.ts).
const role = z.string();
const loginUser = z.object({
  id: z.number().int(),
  username: z.string(),
  email: z.string().nullable(),
  role,
  tenant_id: z.number().int().nullable(),
  must_change_password: z.boolean(),
});
const success = z.object({ success: z.literal(true) });
const profile = z.object({
  id: z.number().int(),
  username: z.string(),
  email: z.string().nullable(),
  role,
  is_active: z.boolean(),
  created_at: z.string().nullable(),
});

const loginEndpoint = endpoint({
  summary: 'Log in with a username and password; sets the session cookie',
  body: loginBody,
  responses: { 200: z.object({ success: z.literal(true), user: loginUser, expires_at: z.string() }) },
  errors: [401, 403, 429],
  auth: 'public',
});
const logoutEndpoint = endpoint({ summary: 'End the current session', responses: { 200: success } });
const checkEndpoint = endpoint({
  summary: "Whether the caller's session is valid (never 401)",
  responses: {
    200: z.object({
      authenticated: z.boolean(),
      user: z.union([
        // permissions: what the web app offers (its navigation); the API still checks every call.
        loginUser.extend({ is_admin: z.boolean(), permissions: z.array(z.string()) }),
        z.object({}).strict().describe('Empty when not authenticated'),
      ]),
    }),
  },
  auth: 'public',
});
const profileEndpoint = endpoint({ summary: "The caller's profile", responses: { 200: profile } });
const meEndpoint = endpoint({
  summary: 'The caller, with role, tenant and effective permissions',
  responses: {
    200: profile.extend({
      tenant_id: z.number().int().nullable(),
      is_admin: z.boolean(),
      must_change_password: z.boolean(),
      permissions: z.array(z.string()),
      last_login_at: z.string().nullable(),
    }),
  },
});
const changePasswordEndpoint = endpoint({
  summary: "Change the caller's password (other sessions of the user end)",
  body: changeBody,
  responses: { 200: z.object({ success: z.literal(true), message: z.string() }) },
});
const passwordPolicyEndpoint = endpoint({
  summary: 'The password rules new passwords must meet',
  responses: {
    200: z.object({
      min_length: z.number().int(),
      max_length: z.number().int(),
      must_differ_from_username: z.literal(true),
    }),
  },
});

export function authRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  void warmDummyHash();

  r.post('/api/auth/login', loginEndpoint, async (req, res) => {
    const body = loginEndpoint.body(req);
    const out = await login(deps, req, body.username, body.password).catch((err: unknown) => {
      if (err instanceof LoginLockedError) res.setHeader('retry-after', String(err.retryAfterSeconds));
      throw err;
    });
    setSessionCookie(req, res, out.token, out.expiresAt, out.issuedAt);
    res.json({
      success: true,
      user: {
        id: out.user.id,
        username: out.user.username,
        email: out.user.email,
        role: out.user.role,
        tenant_id: out.user.tenantId,
        must_change_password: out.user.mustChangePassword,
      },
      expires_at: out.expiresAt.toISOString(),
    });
  });

  r.post('/api/auth/logout', auth, logoutEndpoint, async (req, res) => {
    await authSessionsRepository(deps.database).deactivate(req.auth.sessionId);
    clearSessionCookie(req, res);
    await writeAudit(deps, req, {
      action: 'LOGOUT',
      resourceType: 'session',
      resourceId: req.auth.sessionId,
    });
    res.json({ success: true });
  });

  // Public: answers whether the caller's session is valid. Kept to one indexed query (bench/auth).
  r.get('/api/auth/check', checkEndpoint, async (req, res) => {
    const s = await resolveSession(deps, req);
    if (!s.ok) {
      // The spec's shape is {authenticated: boolean, user: object}: an empty object, never null.
      res.json({ authenticated: false, user: {} });
      return;
    }
    const u = s.auth.user;
    res.json({
      authenticated: true,
      user: {
        id: u.id,
        username: u.username,
        email: u.email,
        role: u.role,
        tenant_id: u.tenantId,
        is_admin: u.isAdmin,
        must_change_password: s.mustChangePassword,
        permissions: [...s.auth.permissions].sort(),
      },
    });
  });

  const profileOf = async (id: number) => {
    const row = await usersRepository(deps.database).findById(id);
    if (!row) throw new UnauthorizedError('Account is disabled');
    return row;
  };

  r.get('/api/auth/profile', auth, profileEndpoint, async (req, res) => {
    const u = await profileOf(req.auth.user.id);
    res.json({
      id: u.id,
      username: u.username,
      email: u.email,
      role: u.role,
      is_active: u.isActive,
      created_at: iso(u.createdAt),
    });
  });

  r.get('/api/auth/me', auth, meEndpoint, async (req, res) => {
    const u = await profileOf(req.auth.user.id);
    res.json({
      id: u.id,
      username: u.username,
      email: u.email,
      role: req.auth.user.role,
      tenant_id: u.tenantId,
      is_admin: req.auth.user.isAdmin,
      is_active: u.isActive,
      must_change_password: u.mustChangePassword,
      permissions: [...req.auth.permissions].sort(),
      created_at: iso(u.createdAt),
      last_login_at: iso(u.lastLoginAt),
    });
  });

  r.post('/api/auth/change-password', auth, changePasswordEndpoint, async (req, res) => {
    const body = changePasswordEndpoint.body(req);
    const u = await profileOf(req.auth.user.id);
    if (!(await verifyPassword(body.current_password, u.passwordHash))) {
      await writeAudit(deps, req, {
        action: 'PASSWORD_CHANGE',
        resourceType: 'user',
        resourceId: u.id,
        success: false,
        details: { reason: 'wrong_current_password' },
      });
      throw new BadRequestError('Current password is incorrect');
    }
    if (body.new_password === body.current_password)
      throw new BadRequestError('New password must differ from the current password');
    const policy = passwordPolicy((await securitySettings(deps)).password_min_length);
    const problem = passwordProblem(policy, u.username, body.new_password);
    if (problem) throw new BadRequestError(problem);
    const now = deps.now();
    await usersRepository(deps.database).setPassword(u.id, await hashPassword(body.new_password), false, now);
    // Other sessions of this user end; the one that changed the password stays.
    await authSessionsRepository(deps.database).deactivateAllForUser(u.id, req.auth.sessionId);
    await writeAudit(deps, req, { action: 'PASSWORD_CHANGE', resourceType: 'user', resourceId: u.id });
    res.json({ success: true, message: 'Password changed' });
  });

  r.get('/api/password-policy', auth, passwordPolicyEndpoint, async (_req, res) => {
    res.json(passwordPolicy((await securitySettings(deps)).password_min_length));
  });

  return r;
}
