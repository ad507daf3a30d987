// Password login: lockout per username, bcrypt verification in constant-ish time for unknown names,
// user and tenant state, then a new session. Routes call `login`; it throws the right AppError.
// `refuseUnlessMayLogIn` (user and tenant state) and `openLoginSession` (the session row, last login,
// the audit record) are shared with SSO sign-in (services/sso/sign-in.ts), so a session opened through
// an identity provider is exactly a password login's session.
import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { authSessionsRepository } from '../db/repositories/auth-sessions.ts';
import { loginAttemptsRepository } from '../db/repositories/login-attempts.ts';
import { usersRepository } from '../db/repositories/users.ts';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '../domain/errors.ts';
import { type LockoutPolicy, lockedUntil, secondsUntil } from '../domain/login-lockout.ts';
import { hashPassword, verifyPassword } from '../domain/passwords.ts';
import { hashSessionToken, newSessionToken } from '../domain/session-token.ts';
import { comparablePasswordHash } from '../domain/sso/unusable-password.ts';
import { noTenantRefusal, tenantRefusal } from '../domain/tenants.ts';
import { securitySettings } from './access-caches.ts';
import { raiseLockoutAlert } from './alerts/producers.ts';
import { writeAudit } from './audit.ts';
import type { AppDeps } from './deps.ts';

/** 429 while a username is locked; the route sends `retryAfterSeconds` as the Retry-After header. */
export class LoginLockedError extends TooManyRequestsError {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many failed login attempts; try again later');
  }
}

export const INVALID_CREDENTIALS = 'Invalid username or password';
/** Inputs longer than this are refused like a wrong password without hashing them. */
const MAX_PASSWORD_INPUT = 1024;

// A real bcrypt hash to compare against when the username is unknown, so both cases cost one bcrypt.
let dummyHash: Promise<string> | undefined;
export const warmDummyHash = () => (dummyHash ??= hashPassword(randomBytes(24).toString('base64url')));

export interface LoginResult {
  token: string;
  issuedAt: Date;
  expiresAt: Date;
  user: {
    id: number;
    username: string;
    email: string | null;
    role: string;
    tenantId: number | null;
    mustChangePassword: boolean;
  };
}

export async function login(
  deps: AppDeps,
  req: Request,
  username: string,
  password: string,
): Promise<LoginResult> {
  const now = deps.now();
  const key = username.slice(0, 100);
  const attempts = loginAttemptsRepository(deps.database);
  const settings = await securitySettings(deps);
  const policy: LockoutPolicy = {
    maxAttempts: settings.login_max_attempts,
    lockoutMinutes: settings.login_lockout_minutes,
  };

  // The attempt is counted BEFORE the password is compared (one atomic statement): of a burst of
  // concurrent guesses at most the policy's number are compared; the rest find the name locked.
  const reservation = await attempts.reserveAttempt(key, now, policy);
  if (!reservation.reserved) {
    await writeAudit(deps, req, {
      action: 'LOGIN_LOCKED',
      resourceType: 'user',
      success: false,
      userId: null,
      tenantId: null,
      username: key,
    });
    throw new LoginLockedError(secondsUntil(reservation.lockedUntil, now));
  }

  const found =
    username.length <= 100 ? await usersRepository(deps.database).findForLogin(username) : undefined;
  const candidate = password.length <= MAX_PASSWORD_INPUT ? password : '';
  // An unknown name still costs one bcrypt comparison, so both answers take about the same time.
  const matches = await verifyPassword(
    candidate,
    found ? comparablePasswordHash(found.user.passwordHash) : await warmDummyHash(),
  );
  const ok = found !== undefined && matches;

  if (!ok || !candidate) {
    // Already counted by the reservation; its count may have locked the name.
    const lock = lockedUntil(
      { attemptCount: 0, lockedUntil: reservation.lockedUntil, lastAttemptAt: now },
      now,
    );
    await writeAudit(deps, req, {
      action: 'LOGIN_FAILED',
      resourceType: 'user',
      resourceId: found?.user.id,
      success: false,
      severity: lock ? 'warning' : 'info',
      userId: found?.user.id ?? null,
      tenantId: found?.user.tenantId ?? null,
      username: key,
      details: lock ? { locked_until: lock.toISOString() } : undefined,
    });
    if (lock)
      await raiseLockoutAlert(deps, {
        username: key,
        userId: found?.user.id ?? null,
        tenantId: found?.user.tenantId ?? null,
        lockedUntil: lock,
        at: now,
      });
    throw new UnauthorizedError(INVALID_CREDENTIALS);
  }

  const user = found!.user;
  // The right password: the reserved attempt (and any count before it) is not a failure.
  await attempts.clear(key);
  await refuseUnlessMayLogIn(deps, req, user, found!.tenant, 'LOGIN_REFUSED');
  return openLoginSession(deps, req, user, { action: 'LOGIN' });
}

type LoginUser = LoginResult['user'] & { isActive: boolean };

/**
 * Throws when this user may not log in: a disabled account (401), or a tenant that is deleted,
 * suspended or inactive, or no tenant for a non-system-administrator (403, audited as `auditAction`
 * with the reason).
 */
export async function refuseUnlessMayLogIn(
  deps: AppDeps,
  req: Request,
  user: { id: number; username: string; role: string; tenantId: number | null; isActive: boolean },
  tenant: { status: string; deletedAt: Date | null; name: string } | null,
  auditAction: string,
  auditDetails: Record<string, unknown> = {},
): Promise<void> {
  if (!user.isActive) throw new UnauthorizedError('Account is disabled');
  const refusal = tenantRefusal(tenant) ?? noTenantRefusal(user);
  if (refusal) {
    await writeAudit(deps, req, {
      action: auditAction,
      resourceType: 'user',
      resourceId: user.id,
      success: false,
      userId: user.id,
      tenantId: user.tenantId,
      username: user.username,
      details: { ...auditDetails, reason: user.tenantId == null ? 'no_tenant' : 'tenant_not_active' },
    });
    throw new ForbiddenError(refusal);
  }
}

/**
 * The one place a login session is issued: a new random token whose SHA-256 is stored in `sessions`
 * with the configured lifetime, the user's last login time, and an audit record (`audit.action`).
 * The caller sets the cookie (services/session-cookie.ts) from the result.
 */
export async function openLoginSession(
  deps: AppDeps,
  req: Request,
  user: LoginUser,
  audit: { action: string; details?: Record<string, unknown> },
): Promise<LoginResult & { sessionId: number; tokenHash: string }> {
  const now = deps.now();
  const token = newSessionToken();
  const tokenHash = hashSessionToken(token);
  const expiresAt = new Date(now.getTime() + deps.settings.SVC_SESSION_LIFETIME_HOURS * 3_600_000);
  const sessionId = await authSessionsRepository(deps.database).create({
    tokenHash,
    userId: user.id,
    createdAt: now,
    expiresAt,
    ipAddress: req.ip?.slice(0, 64) ?? null,
    userAgent: req.get('user-agent')?.slice(0, 500) ?? null,
  });
  await usersRepository(deps.database).touchLogin(user.id, now);
  await writeAudit(deps, req, {
    action: audit.action,
    resourceType: 'session',
    resourceId: sessionId,
    userId: user.id,
    tenantId: user.tenantId,
    username: user.username,
    details: audit.details,
  });
  return {
    token,
    tokenHash,
    sessionId,
    issuedAt: now,
    expiresAt,
    user: {
      id: user.id,
      username: user.username,
      email: user.email,
      role: user.role,
      tenantId: user.tenantId,
      mustChangePassword: user.mustChangePassword,
    },
  };
}
