// Turning an identity the provider has vouched for (OIDC/OAuth2 callback, SAML ACS) into a local login.
//
// Which local user:
//   1. the user already linked to (provider name, subject) in sso_identities;
//   2. else, only when the security setting `sso_link_existing_by_email` is true and the provider says
//      the email is verified, the one live local user with that email (case-insensitive), provided it
//      is in the provider's tenant (any tenant for a platform-wide provider) and is not a system
//      administrator (a tenant's IdP must never be able to take over a platform account); the identity
//      is then linked;
//   3. else a new user: role `user`, the provider's tenant (the default tenant for a platform-wide
//      provider), the tenant's max_users respected, a username from the mapped claims made unique, an
//      unusable password (domain/sso/unusable-password.ts), the email only when verified (so an
//      unverified claim can never later be used to link somebody else's login to this account).
// Then the same checks as password login (disabled account, tenant state; services/login.ts) plus: a
// tenant provider signs in only users of its tenant; a platform-wide provider only users whose tenant
// has sso_enabled. The session is issued by the one session-issuing function (openLoginSession) and
// the cookie set exactly as password login does; an sso_sessions row keyed by the same token hash
// keeps the provider's tokens as Fernet ciphertext. Audit: SSO_LOGIN with provider/created/linked,
// SSO_LOGIN_REFUSED with the reason. Never a token in a log or audit record.
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { ssoIdentitiesRepository } from '../../db/repositories/sso-identities.ts';
import { ssoSessionsRepository } from '../../db/repositories/sso-sessions.ts';
import { ssoUsersRepository } from '../../db/repositories/sso-users.ts';
import { tenantsRepository } from '../../db/repositories/tenants.ts';
import { type UserRow, usersRepository } from '../../db/repositories/users.ts';
import { isUniqueViolation } from '../../db/unique-violation.ts';
import { isSystemAdmin } from '../../domain/access.ts';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../../domain/errors.ts';
import { hashPassword } from '../../domain/passwords.ts';
import { unusablePasswordHash } from '../../domain/sso/unusable-password.ts';
import { baseUsername, candidateUsernames } from '../../domain/sso/username.ts';
import { DEFAULT_TENANT_ID, tenantRefusal } from '../../domain/tenants.ts';
import { securitySettings } from '../access-caches.ts';
import type { AppDeps } from '../deps.ts';
import { openLoginSession, refuseUnlessMayLogIn } from '../login.ts';
import { setSessionCookie } from '../session-cookie.ts';
import { auditSsoRefusal, SSO_LOGIN, SSO_LOGIN_REFUSED } from './audit.ts';
import { sealSsoSecret } from './cipher.ts';
import { SSO_DISABLED_FOR_TENANT, type SsoProvider, tenantAllowsSso } from './providers.ts';

export const SSO_SIGN_IN_REFUSED = 'Single sign-on login refused';
const MAX_SUBJECT = 255;

export interface ExternalIdentity {
  provider: SsoProvider;
  subject: string;
  email?: string | null;
  emailVerified?: boolean;
  username?: string | null;
  displayName?: string | null;
  providerTokens?: { accessToken?: string; refreshToken?: string; expiresAt?: Date };
}

export interface SignInResult {
  userId: number;
  token: string;
  created: boolean;
  linked: boolean;
}

class Refusal extends Error {
  constructor(
    readonly reason: string,
    readonly error: Error,
  ) {
    super(reason);
  }
}

export async function signInExternalIdentity(
  deps: AppDeps,
  req: Request,
  res: Response,
  input: ExternalIdentity,
): Promise<SignInResult> {
  const { provider } = input;
  try {
    return await signIn(deps, req, res, input);
  } catch (err) {
    if (err instanceof Refusal) {
      await auditSsoRefusal(deps, req, provider.name, err.reason);
      throw err.error;
    }
    throw err;
  }
}

async function signIn(
  deps: AppDeps,
  req: Request,
  res: Response,
  input: ExternalIdentity,
): Promise<SignInResult> {
  const { provider } = input;
  const subject = typeof input.subject === 'string' ? input.subject : '';
  if (!subject || subject.length > MAX_SUBJECT)
    throw new Refusal('invalid_subject', new UnauthorizedError(SSO_SIGN_IN_REFUSED));
  const email = normaliseEmail(input.email);
  const users = usersRepository(deps.database);
  const identities = ssoIdentitiesRepository(deps.database);
  let created = false;
  let linked = false;

  let user: UserRow | undefined;
  const linkedId = await identities.findUserId(provider.name, subject);
  if (linkedId !== undefined) {
    const row = await users.findAnyById(linkedId);
    if (!row || row.deletedAt)
      throw new Refusal('user_deleted', new UnauthorizedError('Account is disabled'));
    user = row;
  } else {
    const byEmail = await linkableByEmail(deps, provider, email, input.emailVerified === true);
    if (byEmail !== undefined) {
      if (await identities.link(byEmail, provider.name, subject, deps.now())) {
        user = await users.findById(byEmail);
        linked = true;
      }
    }
    if (!user) {
      user = await provision(deps, input, email);
      created = true;
    }
  }

  if (provider.tenantId != null && user.tenantId !== provider.tenantId)
    throw new Refusal('user_in_other_tenant', new ForbiddenError(SSO_SIGN_IN_REFUSED));
  if (
    provider.tenantId == null &&
    user.tenantId != null &&
    !(await tenantAllowsSso(deps.database, user.tenantId))
  )
    throw new Refusal('sso_disabled_for_user_tenant', new ForbiddenError(SSO_DISABLED_FOR_TENANT));

  const tenant =
    user.tenantId != null ? await tenantsRepository(deps.database).findById(user.tenantId, true) : undefined;
  await refuseUnlessMayLogIn(
    deps,
    req,
    user,
    tenant ? { status: tenant.status, deletedAt: tenant.deletedAt, name: tenant.name } : null,
    SSO_LOGIN_REFUSED,
    { provider: provider.name },
  ).catch(async (err: unknown) => {
    if (err instanceof UnauthorizedError)
      await auditSsoRefusal(deps, req, provider.name, 'account_disabled', {
        userId: user.id,
        tenantId: user.tenantId,
        username: user.username,
      });
    throw err;
  });

  const session = await openLoginSession(deps, req, user, {
    action: SSO_LOGIN,
    details: { provider: provider.name, created, linked },
  });
  const tokens = input.providerTokens ?? {};
  await ssoSessionsRepository(deps.database).create({
    sessionTokenHash: session.tokenHash,
    userId: user.id,
    providerName: provider.name,
    accessTokenCiphertext: tokens.accessToken ? sealSsoSecret(deps, tokens.accessToken) : null,
    refreshTokenCiphertext: tokens.refreshToken ? sealSsoSecret(deps, tokens.refreshToken) : null,
    expiresAt: session.expiresAt,
  });
  setSessionCookie(req, res, session.token, session.expiresAt, session.issuedAt);
  return { userId: user.id, token: session.token, created, linked };
}

function normaliseEmail(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const e = raw.trim();
  if (e.length === 0 || e.length > 254 || !e.includes('@')) return null;
  return e;
}

/** The user id to link by email, or undefined (setting off, unverified, none, several, or not eligible). */
async function linkableByEmail(
  deps: AppDeps,
  provider: SsoProvider,
  email: string | null,
  verified: boolean,
): Promise<number | undefined> {
  if (!email || !verified) return undefined;
  if (!(await securitySettings(deps)).sso_link_existing_by_email) return undefined;
  const matches = await ssoUsersRepository(deps.database).findLiveByEmail(email, 2);
  if (matches.length !== 1) return undefined;
  const m = matches[0]!;
  if (isSystemAdmin(m) || m.isAdmin) return undefined;
  if (provider.tenantId != null && m.tenantId !== provider.tenantId) return undefined;
  return m.id;
}

async function provision(deps: AppDeps, input: ExternalIdentity, email: string | null): Promise<UserRow> {
  const { provider } = input;
  const tenantId = provider.tenantId ?? DEFAULT_TENANT_ID;
  const tenants = tenantsRepository(deps.database);
  const users = usersRepository(deps.database);
  const tenant = await tenants.findById(tenantId, true);
  if (!tenant || tenantRefusal(tenant))
    throw new Refusal(
      'tenant_not_active',
      new ForbiddenError(tenant ? tenantRefusal(tenant)! : SSO_SIGN_IN_REFUSED),
    );
  if (provider.tenantId == null && !(await tenantAllowsSso(deps.database, tenantId)))
    throw new Refusal('sso_disabled_for_user_tenant', new ForbiddenError(SSO_DISABLED_FOR_TENANT));
  const quota = await tenants.quotaOf(tenantId);
  if (quota && (await users.countInTenant(tenantId)) >= quota.maxUsers)
    throw new Refusal(
      'tenant_user_limit',
      new ForbiddenError(`Tenant user limit reached (${quota.maxUsers})`),
    );

  const passwordHash = unusablePasswordHash(await hashPassword(randomBytes(32).toString('base64url')));
  const base = baseUsername({ username: input.username, email, subject: input.subject });
  const now = deps.now();
  const verifiedEmail = input.emailVerified === true ? email : null;
  for (const name of candidateUsernames(
    base,
    [1, 2, 3].map(() => randomBytes(4).toString('hex')),
  )) {
    if (await users.usernameTaken(name)) continue;
    let row: UserRow;
    try {
      row = await users.create({
        username: name,
        email: verifiedEmail,
        passwordHash,
        role: 'user',
        isAdmin: false,
        tenantId,
        mustChangePassword: false,
        createdAt: now,
        updatedAt: now,
      });
    } catch (err) {
      if (isUniqueViolation(err)) continue;
      throw err;
    }
    if (await ssoIdentitiesRepository(deps.database).link(row.id, provider.name, input.subject, now))
      return row;
    // Another login of the same identity provisioned first: keep theirs, retire ours.
    await users.softDelete(row.id, now);
    const winner = await ssoIdentitiesRepository(deps.database).findUserId(provider.name, input.subject);
    const existing = winner !== undefined ? await users.findById(winner) : undefined;
    if (existing) return existing;
    throw new Refusal('identity_race', new UnauthorizedError(SSO_SIGN_IN_REFUSED));
  }
  throw new Refusal('username_exhausted', new BadRequestError(SSO_SIGN_IN_REFUSED));
}
