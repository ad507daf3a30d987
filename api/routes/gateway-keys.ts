// Personal gateway keys (issue 29 item 1): /api/gateway-keys. A signed-in user with a tenant creates
// keys for the CLIs on their own laptop; the model proxy takes one wherever it takes a session's proxy
// token (api/llm-proxy/gateway-caller.ts), with the owner's quota and the key's own limits.
//
//   GET    /api/gateway-keys        the caller's own keys, newest first. `?scope=tenant`: a tenant
//                                   administrator's whole tenant; a system administrator's every tenant
//                                   (or `tenant_id`). Never the key, only `key_prefix`.
//   POST   /api/gateway-keys        {name, provider, expires_at?, daily_token_limit?, monthly_token_limit?,
//                                   daily_request_limit?} -> 201 the key's view plus `key`, shown in this
//                                   answer only (stored as SHA-256). `readonly` users: 403.
//   DELETE /api/gateway-keys/:id    revokes (204): the owner, an administrator of the key's tenant, or a
//                                   system administrator; anyone else 404 (as missing). The key stops on
//                                   every instance at once (services/gateway-keys.ts).
// Create and revoke are audited (GATEWAY_KEY_CREATE, GATEWAY_KEY_REVOKE) with the prefix, never the key.
import { Router } from 'express';
import { z } from 'zod';
import { type GatewayKeyView, gatewayKeysRepository } from '../../db/repositories/gateway-keys.ts';
import { BadRequestError, ForbiddenError } from '../../domain/errors.ts';
import { gatewayKeyPrefix, hashGatewayKey, newGatewayKey } from '../../domain/gateway-keys.ts';
import { KEY_PROVIDERS } from '../../domain/key-providers.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { invalidateGatewayKey } from '../../services/gateway-keys.ts';
import { authenticate } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { credentialListFilter, mayManageCredential, refuseCredentialRevoke } from './personal-credentials.ts';

const limit = z.number().int().positive().max(2_147_483_647).optional();

const keyView = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  provider: z.enum(KEY_PROVIDERS),
  key_prefix: z.string(),
  expires_at: z.string().nullable(),
  daily_token_limit: z.number().int().nullable(),
  monthly_token_limit: z.number().int().nullable(),
  daily_request_limit: z.number().int().nullable(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  user_id: z.number().int(),
  username: z.string(),
});

const listKeys = endpoint({
  tags: ['gateway-keys'],
  summary: 'Personal gateway keys (never the key itself)',
  description:
    "The caller's own keys; `scope=tenant` lists a tenant administrator's tenant, or for a system administrator every tenant (narrowed by `tenant_id`).",
  query: z.object({
    scope: z.enum(['own', 'tenant']).default('own'),
    tenant_id: z.coerce.number().int().positive().optional(),
  }),
  responses: { 200: z.looseObject({ keys: z.array(keyView) }) },
});
const createKey = endpoint({
  tags: ['gateway-keys'],
  summary: 'Create a personal gateway key for the model proxy (shown once, in this answer)',
  body: z.object({
    name: z.string().trim().min(1).max(100),
    provider: z.enum(KEY_PROVIDERS),
    expires_at: z.iso.datetime({ offset: true }).optional(),
    daily_token_limit: limit,
    monthly_token_limit: limit,
    daily_request_limit: limit,
  }),
  errors: [403],
  responses: { 201: keyView.extend({ key: z.string() }) },
});
const revokeKey = endpoint({
  tags: ['gateway-keys'],
  summary: 'Revoke a personal gateway key (stops on every instance at once)',
  params: z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) }),
  errors: [404],
  responses: { 204: 'Revoked' },
});

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const view = (k: GatewayKeyView) => ({
  id: k.id,
  name: k.name,
  provider: k.provider,
  key_prefix: k.keyPrefix,
  expires_at: iso(k.expiresAt),
  daily_token_limit: k.dailyTokenLimit,
  monthly_token_limit: k.monthlyTokenLimit,
  daily_request_limit: k.dailyRequestLimit,
  created_at: k.createdAt.toISOString(),
  last_used_at: iso(k.lastUsedAt),
  revoked_at: iso(k.revokedAt),
  user_id: k.userId,
  username: k.username,
  tenant_id: k.tenantId,
});

export function gatewayKeysRouter(deps: AppDeps): Router {
  const r = Router();
  r.use('/api/gateway-keys', authenticate(deps));
  const keys = gatewayKeysRepository(deps.database);

  r.get('/api/gateway-keys', listKeys, async (req, res) => {
    const q = listKeys.query(req);
    const filter = credentialListFilter(req, q, 'gateway keys');
    res.json({ keys: (await keys.list(filter)).map(view) });
  });

  r.post('/api/gateway-keys', createKey, async (req, res) => {
    const { user } = req.auth;
    // A key spends its owner's quota: a read-only user may not, and one without a tenant has no key
    // to call with.
    if (user.role === 'readonly') throw new ForbiddenError('Read-only users may not create gateway keys');
    if (user.tenantId === null) throw new ForbiddenError('Gateway keys need a tenant');
    const body = createKey.body(req);
    const now = deps.now();
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= now.getTime())
      throw new BadRequestError('expires_at must be in the future');
    const raw = newGatewayKey();
    const created = await keys.create({
      tenantId: user.tenantId,
      userId: user.id,
      name: body.name,
      provider: body.provider,
      keyHash: hashGatewayKey(raw),
      keyPrefix: gatewayKeyPrefix(raw),
      expiresAt,
      dailyTokenLimit: body.daily_token_limit ?? null,
      monthlyTokenLimit: body.monthly_token_limit ?? null,
      dailyRequestLimit: body.daily_request_limit ?? null,
      createdAt: now,
    });
    await writeAudit(deps, req, {
      action: 'GATEWAY_KEY_CREATE',
      resourceType: 'gateway_key',
      resourceId: created.id,
      details: {
        name: created.name,
        provider: created.provider,
        key_prefix: created.keyPrefix,
        expires_at: iso(created.expiresAt),
      },
    });
    res.status(201).json({ ...view(created), key: raw });
  });

  r.delete('/api/gateway-keys/:id', revokeKey, async (req, res) => {
    const { id } = revokeKey.params(req);
    const found = await keys.find(id);
    // Someone else's answers like a missing one: its existence is not disclosed.
    if (!found || !mayManageCredential(req, found))
      return refuseCredentialRevoke(deps, req, {
        action: 'GATEWAY_KEY_REVOKE',
        resourceType: 'gateway_key',
        id,
        found: found !== undefined,
        notFound: 'Gateway key not found',
      });
    const revoked = await keys.revoke(found.id, req.auth.user.id, deps.now());
    await invalidateGatewayKey(deps.database, found.id);
    await writeAudit(deps, req, {
      action: 'GATEWAY_KEY_REVOKE',
      resourceType: 'gateway_key',
      resourceId: found.id,
      targetTenantId: found.tenantId,
      details: {
        name: found.name,
        key_prefix: found.keyPrefix,
        owner_user_id: found.userId,
        already_revoked: !revoked,
      },
    });
    res.status(204).end();
  });

  return r;
}
