// GET/DELETE /api/sso/session: the caller's SSO session (provider and expiry; never a token) and
// logout (ends the auth session and its sso_sessions row, clears the cookie).
// GET /api/sso/identities/<user_id> and DELETE /api/sso/identities/<user_id>/<provider_name>: the
// user's linked identities, for the user itself or an administrator of the user's tenant (system
// administrators: any user). Anyone else gets 403 before the user is even looked up, so the answer
// does not reveal whether an id exists; an administrator asking for an unknown user gets 404.
//
// Unlinking the last identity of a user who has no usable password (provisioned by SSO and never
// given one) is refused with 409: the account would be left with no way to log in. An administrator
// sets a password first (or disables the user). Unlinking also ends the sessions the user opened
// through that provider.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { authSessionsRepository } from '../../../db/repositories/auth-sessions.ts';
import { ssoIdentitiesRepository } from '../../../db/repositories/sso-identities.ts';
import { ssoSessionsRepository } from '../../../db/repositories/sso-sessions.ts';
import { usersRepository } from '../../../db/repositories/users.ts';
import { canAccessOwned, isAdministrator } from '../../../domain/access.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../domain/errors.ts';
import { hashSessionToken } from '../../../domain/session-token.ts';
import { hasUsablePassword } from '../../../domain/sso/unusable-password.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { clearSessionCookie } from '../../../services/session-cookie.ts';
import { SSO_LOGOUT } from '../../../services/sso/audit.ts';
import { iso } from '../../json-dates.ts';
import { authenticate, sessionTokenOf } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getSsoSession = endpoint({
  tags: ['sso'],
  summary: 'Whether the current session came from single sign-on',
  responses: {
    200: z.looseObject({
      active: z.boolean(),
      provider: z.string().optional(),
      user_id: z.number().int().optional(),
      expires_at: z.string().nullable().optional(),
    }),
  },
});
const deleteSsoSession = endpoint({
  tags: ['sso'],
  summary: 'Log out (and end the SSO session when there is one)',
  responses: { 200: z.looseObject({ success: z.literal(true), sso: z.boolean() }) },
});
const getSsoIdentitiesId = endpoint({
  tags: ['sso'],
  responses: {
    200: z.looseObject({
      user_id: z.number().int(),
      identities: z.array(
        z.looseObject({
          provider_name: z.string(),
          provider_user_id: z.string(),
          created_at: z.string().nullable(),
        }),
      ),
    }),
  },
});
const deleteSsoIdentitiesIdName = endpoint({
  tags: ['sso'],
  responses: { 200: z.looseObject({ success: z.literal(true) }) },
  errors: [409],
});

export function ssoSessionRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const ssoSessions = () => ssoSessionsRepository(deps.database);

  const currentTokenHash = (req: Request) => {
    const t = sessionTokenOf(req);
    return t ? hashSessionToken(t.token) : '';
  };

  r.get('/api/sso/session', getSsoSession, auth, async (req, res) => {
    const row = await ssoSessions().findBySessionTokenHash(currentTokenHash(req));
    if (!row || row.userId !== req.auth.user.id) {
      res.json({ active: false });
      return;
    }
    res.json({
      active: true,
      provider: row.providerName,
      user_id: row.userId,
      expires_at: iso(row.expiresAt),
    });
  });

  r.delete('/api/sso/session', deleteSsoSession, auth, async (req, res) => {
    const hash = currentTokenHash(req);
    const row = await ssoSessions().findBySessionTokenHash(hash);
    await authSessionsRepository(deps.database).deactivate(req.auth.sessionId);
    if (row) await ssoSessions().deleteBySessionTokenHash(hash);
    clearSessionCookie(req, res);
    await writeAudit(deps, req, {
      action: SSO_LOGOUT,
      resourceType: 'session',
      resourceId: req.auth.sessionId,
      details: { provider: row?.providerName ?? null },
    });
    res.json({ success: true, sso: row !== undefined });
  });

  /** The target user when the caller may see or change its identities; 403 / 404 otherwise. */
  const target = async (req: Request) => {
    const raw = String(req.params.user_id);
    if (!/^[0-9]{1,10}$/.test(raw)) throw new BadRequestError('user_id: must be a positive integer');
    const id = Number(raw);
    const me = req.auth.user;
    if (id !== me.id && !isAdministrator(me, req.auth.permissions)) throw new ForbiddenError('Access denied');
    const user = await usersRepository(deps.database).findById(id);
    if (!user) throw new NotFoundError('User not found');
    if (!canAccessOwned(me, id, user.tenantId)) throw new ForbiddenError('Access denied');
    return user;
  };

  r.get('/api/sso/identities/:user_id', getSsoIdentitiesId, auth, async (req, res) => {
    const user = await target(req);
    const rows = await ssoIdentitiesRepository(deps.database).listForUser(user.id);
    res.json({
      user_id: user.id,
      identities: rows.map((i) => ({
        provider_name: i.providerName,
        provider_user_id: i.providerUserId,
        created_at: iso(i.createdAt),
      })),
    });
  });

  r.delete(
    '/api/sso/identities/:user_id/:provider_name',
    deleteSsoIdentitiesIdName,
    auth,
    async (req, res) => {
      const user = await target(req);
      const provider = String(req.params.provider_name).slice(0, 100);
      const identities = ssoIdentitiesRepository(deps.database);
      const rows = await identities.listForUser(user.id);
      const here = rows.filter((i) => i.providerName === provider);
      if (here.length === 0) throw new NotFoundError('Identity not found');
      if (here.length === rows.length && !hasUsablePassword(user.passwordHash))
        throw new ConflictError(
          'This is the only way this user can log in; set a password for the user before unlinking it',
        );
      await identities.unlink(user.id, provider);
      // End the sessions opened through this provider.
      const sessions = authSessionsRepository(deps.database);
      for (const s of await ssoSessions().listForUserAndProvider(user.id, provider)) {
        const p = await sessions.findByTokenHash(s.sessionToken);
        if (p) await sessions.deactivate(p.sessionId);
      }
      await ssoSessions().deleteForUserAndProvider(user.id, provider);
      await writeAudit(deps, req, {
        action: 'SSO_IDENTITY_UNLINK',
        resourceType: 'user',
        resourceId: user.id,
        targetTenantId: user.tenantId,
        details: { provider },
      });
      res.json({ success: true });
    },
  );

  return r;
}
