// Personal upload tokens (issue 25 item 5): /api/upload-tokens. A signed-in user creates tokens for
// their own collectors; rows uploaded with one count for its owner (services/upload-tokens.ts).
//
//   GET    /api/upload-tokens            the caller's own tokens, newest first. `?scope=tenant`: a tenant
//                                        administrator's whole tenant; a system administrator's every
//                                        tenant (or `tenant_id`). Never the token, only a `prefix` hint.
//   POST   /api/upload-tokens            {name, expires_in_days?} -> 201 {success, upload_token, token}:
//                                        `token` is shown in this answer only (stored as SHA-256).
//   DELETE /api/upload-tokens/:id        revokes: the owner, a tenant administrator of the token's
//                                        tenant, or a system administrator; anyone else 404 (as missing).
// Create and revoke are audited (UPLOAD_TOKEN_CREATE, UPLOAD_TOKEN_REVOKE), as are refused uses
// (UPLOAD_TOKEN_REFUSED, api/routes/upload.ts).
import { Router } from 'express';
import { z } from 'zod';
import { type UploadTokenView, uploadTokensRepository } from '../../db/repositories/upload-tokens.ts';
import { hashUploadToken, newUploadToken, uploadTokenHint } from '../../domain/upload-tokens.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { credentialListFilter, mayManageCredential, refuseCredentialRevoke } from './personal-credentials.ts';

const DAY_MS = 86_400_000;

const tokenView = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  prefix: z.string(),
  user_id: z.number().int(),
  username: z.string(),
  tenant_id: z.number().int().nullable(),
  status: z.enum(['active', 'expired', 'revoked']),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});

const listTokens = endpoint({
  tags: ['upload'],
  summary: 'Personal upload tokens (never the token itself)',
  description:
    "The caller's own tokens; `scope=tenant` lists a tenant administrator's tenant, or for a system administrator every tenant (narrowed by `tenant_id`).",
  query: z.object({
    scope: z.enum(['own', 'tenant']).default('own'),
    tenant_id: z.coerce.number().int().positive().optional(),
  }),
  responses: { 200: z.looseObject({ success: z.literal(true), upload_tokens: z.array(tokenView) }) },
});
const createToken = endpoint({
  tags: ['upload'],
  summary: 'Create a personal upload token (shown once, in this answer)',
  body: z.object({
    name: z.string().trim().min(1).max(100),
    expires_in_days: z.number().int().min(1).max(3650).optional(),
  }),
  responses: {
    201: z.looseObject({ success: z.literal(true), upload_token: tokenView, token: z.string() }),
  },
});
const revokeToken = endpoint({
  tags: ['upload'],
  summary: 'Revoke a personal upload token',
  params: z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) }),
  errors: [404],
  responses: { 200: z.looseObject({ success: z.literal(true), upload_token: tokenView }) },
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function uploadTokensRouter(deps: AppDeps): Router {
  const r = Router();
  r.use('/api/upload-tokens', authenticate(deps));
  const tokens = uploadTokensRepository(deps.database);

  const view = (t: UploadTokenView) => ({
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    user_id: t.userId,
    username: t.username,
    tenant_id: t.tenantId,
    status: t.revokedAt
      ? ('revoked' as const)
      : t.expiresAt && t.expiresAt <= deps.now()
        ? ('expired' as const)
        : ('active' as const),
    created_at: t.createdAt.toISOString(),
    expires_at: iso(t.expiresAt),
    last_used_at: iso(t.lastUsedAt),
    revoked_at: iso(t.revokedAt),
  });

  r.get('/api/upload-tokens', listTokens, async (req, res) => {
    const q = listTokens.query(req);
    const filter = credentialListFilter(req, q, 'upload tokens');
    const rows = await tokens.list(filter);
    res.json({ success: true, upload_tokens: rows.map(view) });
  });

  r.post('/api/upload-tokens', createToken, async (req, res) => {
    const body = createToken.body(req);
    const now = deps.now();
    const token = newUploadToken();
    const created = await tokens.create({
      userId: req.auth.user.id,
      tenantId: req.auth.user.tenantId,
      name: body.name,
      tokenHash: hashUploadToken(token),
      prefix: uploadTokenHint(token),
      createdAt: now,
      expiresAt: body.expires_in_days ? new Date(now.getTime() + body.expires_in_days * DAY_MS) : null,
    });
    await writeAudit(deps, req, {
      action: 'UPLOAD_TOKEN_CREATE',
      resourceType: 'upload_token',
      resourceId: created.id,
      details: { name: created.name, prefix: created.prefix, expires_at: iso(created.expiresAt) },
    });
    res.status(201).json({ success: true, upload_token: view(created), token });
  });

  r.delete('/api/upload-tokens/:id', revokeToken, async (req, res) => {
    const { id } = revokeToken.params(req);
    const found = await tokens.find(id);
    // Someone else's answers like a missing one: its existence is not disclosed.
    if (!found || !mayManageCredential(req, found))
      return refuseCredentialRevoke(deps, req, {
        action: 'UPLOAD_TOKEN_REVOKE',
        resourceType: 'upload_token',
        id,
        found: found !== undefined,
        notFound: 'Upload token not found',
      });
    const revoked = await tokens.revoke(found.id, req.auth.user.id, deps.now());
    await writeAudit(deps, req, {
      action: 'UPLOAD_TOKEN_REVOKE',
      resourceType: 'upload_token',
      resourceId: found.id,
      targetTenantId: found.tenantId,
      details: { name: found.name, owner_user_id: found.userId, already_revoked: !revoked },
    });
    res.json({ success: true, upload_token: view((await tokens.find(found.id))!) });
  });

  return r;
}
