// The model-key vault (spec document 1, "Stored API key management"): system administrators store the
// provider keys the remote model proxy uses. Keys are encrypted before storage, listings are masked,
// and no response, log line or audit record ever carries a key value.
//
//   GET    /api/remote/api-keys[?tenant_id=N]  {keys: [masked views]}
//   POST   /api/remote/api-keys                {provider, key_name, api_key, base_url?, tenant_id?}
//                                              -> 201 {success, key}; 400 invalid input, provider or
//                                                 base_url; 409 the same key, or a key of the same
//                                                 key_name, is already stored for the tenant
//   DELETE /api/remote/api-keys/<id>           {success}; 404 unknown id
//
// `tenant_id` is optional (the spec's payload has none): the key belongs to that tenant, else to the
// administrator's own tenant, else to the default tenant. Everyone else gets 403, audited.
// base_url passes the one validation module (services/egress/base-url.ts) with the system-admin policy:
// any host (private gateways are normal), never credentials; the audit record names the host. Keys
// stored here are marked created_by_system_admin: tenant administrators cannot change or delete them,
// and the proxy does not run its egress guard for them.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { apiKeyStoreRepository, type StoredKeyRow } from '../../../db/repositories/api-key-store.ts';
import { tenantsRepository } from '../../../db/repositories/tenants.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../domain/errors.ts';
import { isKeyProvider, KEY_PROVIDERS } from '../../../domain/key-providers.ts';
import { machineStanding, mayPerform } from '../../../domain/remote-authority.ts';
import { DEFAULT_TENANT_ID } from '../../../domain/tenants.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { checkKeyBaseUrl } from '../../../services/egress/base-url.ts';
import { storedKeyCipher } from '../../../services/stored-keys.ts';
import { authenticate } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';

const PATH = '/api/remote/api-keys';
const tenantId = z.coerce.number().int().positive().max(2_147_483_647);

const createBody = z.object({
  provider: z.string(),
  key_name: z.string().trim().min(1).max(255),
  api_key: z.string().trim().min(1).max(4096),
  base_url: z.string().trim().max(500).nullish(),
  tenant_id: tenantId.optional(),
  cli_tools: z.string().max(10_000).nullish(),
  cli_settings: z.string().max(10_000).nullish(),
});
const listQuery = z.object({ tenant_id: tenantId.optional() });
const idParam = z.object({ id: tenantId });

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const tags = ['remote'];
const storedKeyAnswer = z.looseObject({
  id: z.number().int(),
  tenant_id: z.number().int().nullable(),
  provider: z.string(),
  key_name: z.string().nullable(),
  masked_key: z.string(),
  base_url: z.string().nullable(),
  is_active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
const listKeys = endpoint({
  tags,
  summary: 'Stored provider keys (masked)',
  query: listQuery,
  responses: { 200: z.looseObject({ success: z.literal(true), keys: z.array(storedKeyAnswer) }) },
});
const createKey = endpoint({
  tags,
  summary: 'Store a provider key (encrypted at rest)',
  body: createBody,
  responses: { 201: z.looseObject({ success: z.literal(true), key: storedKeyAnswer }) },
});
const deleteKey = endpoint({
  tags,
  summary: 'Delete a stored provider key',
  params: idParam,
  responses: { 200: z.looseObject({ success: z.literal(true) }) },
});

export function apiKeyVaultRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const keys = apiKeyStoreRepository(deps.database);
  const cipher = storedKeyCipher(deps.settings);
  let warnedDevelopmentKey = false;

  const view = (row: StoredKeyRow) => ({
    id: row.id,
    tenant_id: row.tenantId,
    provider: row.provider,
    key_name: row.keyName,
    masked_key: cipher.masked(row.encryptedKey),
    key_hash: row.keyHash,
    base_url: row.baseUrl,
    is_active: row.isActive,
    created_by: row.createdBy,
    created_by_system_admin: row.createdBySystemAdmin,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    cli_tools: row.cliTools,
    cli_settings: row.cliSettings,
  });

  /** System administrators only; anyone else is refused with 403 and an audit record. */
  async function requireVaultAccess(req: Request, action: string, resourceId?: string) {
    if (mayPerform('manage_stored_api_keys', machineStanding(req.auth.user, null))) return;
    await writeAudit(deps, req, {
      action,
      resourceType: 'api_key_store',
      resourceId,
      success: false,
      details: { reason: 'forbidden' },
    });
    throw new ForbiddenError('System administrator access required');
  }

  r.get(PATH, listKeys, auth, async (req, res) => {
    await requireVaultAccess(req, 'REMOTE_API_KEY_LIST');
    const q = listKeys.query(req);
    const rows = await keys.list({ tenantId: q.tenant_id });
    res.json({ success: true, keys: rows.map(view) });
  });

  r.post(PATH, createKey, auth, async (req, res) => {
    await requireVaultAccess(req, 'REMOTE_API_KEY_CREATE');
    const body = createKey.body(req);
    if (!isKeyProvider(body.provider))
      throw new BadRequestError(`provider must be one of ${KEY_PROVIDERS.join(', ')}`);
    const base = await checkKeyBaseUrl(body.base_url, 'system_admin', deps.settings);
    const tenant = body.tenant_id ?? req.auth.user.tenantId ?? DEFAULT_TENANT_ID;
    if (!(await tenantsRepository(deps.database).findById(tenant)))
      throw new BadRequestError('Unknown tenant_id');

    const sealed = cipher.seal(body.api_key);
    if (await keys.findActiveByHash(tenant, body.provider, sealed.keyHash))
      throw new ConflictError('This key is already stored for the tenant and provider');
    if (cipher.usingDevelopmentKey && !warnedDevelopmentKey) {
      warnedDevelopmentKey = true;
      deps.logger.warn(
        'SVC_ENCRYPTION_KEY is not set: a provider key was encrypted with the development-only fallback key',
      );
    }
    const now = deps.now();
    const row = await keys.create({
      tenantId: tenant,
      provider: body.provider,
      keyName: body.key_name,
      encryptedKey: sealed.encryptedKey,
      keyHash: sealed.keyHash,
      baseUrl: base.url,
      isActive: true,
      createdBy: req.auth.user.id,
      createdBySystemAdmin: true,
      createdAt: now,
      updatedAt: now,
      cliTools: body.cli_tools ?? null,
      cliSettings: body.cli_settings ?? null,
    });
    await writeAudit(deps, req, {
      action: 'REMOTE_API_KEY_CREATE',
      resourceType: 'api_key_store',
      resourceId: row.id,
      targetTenantId: tenant,
      details: {
        provider: row.provider,
        key_name: row.keyName,
        base_url: row.baseUrl,
        base_url_host: base.host,
      },
    });
    res.status(201).json({ success: true, key: view(row) });
  });

  r.delete(`${PATH}/:id`, deleteKey, auth, async (req, res) => {
    await requireVaultAccess(req, 'REMOTE_API_KEY_DELETE', String(req.params.id).slice(0, 64));
    const { id } = deleteKey.params(req);
    const row = await keys.find(id);
    if (!row || !(await keys.remove(id))) throw new NotFoundError('API key not found');
    await writeAudit(deps, req, {
      action: 'REMOTE_API_KEY_DELETE',
      resourceType: 'api_key_store',
      resourceId: row.id,
      targetTenantId: row.tenantId,
      severity: 'warning',
      details: { provider: row.provider, key_name: row.keyName },
    });
    res.json({ success: true });
  });

  return r;
}
