// Tenant-scoped API key endpoints: /api/api-keys (document 1). The tenant rules table decides the
// target tenant (domain/tenant-scope.ts); `tenant_id` only selects a target and never grants
// authority. A key that does not exist or lives in another tenant answers 403, never 404. Every call
// writes an audit record with the fields the spec lists for platform-admin cross-tenant actions.
//
// Egress and key origin (issue 8): base_url goes through the one validation module
// (services/egress/base-url.ts) with the writer's policy: a tenant administrator's key must be https
// and may not name a loopback, private, link-local or metadata host unless egress.allow_hosts names
// it; a system administrator may point a key anywhere (audited with the host). A key a system
// administrator stored (or last repointed / re-keyed) is theirs: a tenant administrator sees it
// without even the masked key and gets 403 for any change or deletion. Duplicate names answer 409.
import { type Request, Router } from 'express';
import { z } from 'zod';
import {
  type TenantKeyPatch,
  type TenantKeyRow,
  tenantApiKeysRepository,
} from '../../db/repositories/tenant-api-keys.ts';
import { tenantsRepository } from '../../db/repositories/tenants.ts';
import { isSystemAdmin } from '../../domain/access.ts';
import { decryptSecret, encryptSecret, keyHash, maskKey } from '../../domain/crypto/fernet.ts';
import { BadRequestError, ForbiddenError } from '../../domain/errors.ts';
import { KEY_PROVIDERS } from '../../domain/key-providers.ts';
import {
  type KeyTenantDecision,
  parseTenantIdParam,
  resolveKeyTenant,
  TENANT_KEY_ERRORS,
} from '../../domain/tenant-scope.ts';
import { requestIdOf, writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { checkKeyBaseUrl } from '../../services/egress/base-url.ts';
import { storageKey } from '../../services/secrets.ts';
import { authenticate, requireAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

type KeyAction = 'API_KEY_CREATE' | 'API_KEY_READ' | 'API_KEY_UPDATE' | 'API_KEY_DELETE';
type KeyResult = 'success' | 'denied' | 'not_found';

const SYSTEM_ADMIN_KEY =
  'This key was stored by a system administrator; only a system administrator can change or delete it';

const cliText = z
  .union([z.string().max(100_000), z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .nullish()
  .transform((v) => (v == null ? (v as null | undefined) : typeof v === 'string' ? v : JSON.stringify(v)));
/** Shape and egress policy are checked by checkKeyBaseUrl; '' or null means the provider's default. */
const baseUrl = z.string().max(500).nullish();
const createBody = z.object({
  provider: z.enum(KEY_PROVIDERS),
  key_name: z.string().trim().min(1).max(255),
  api_key: z.string().trim().min(1).max(4096),
  base_url: baseUrl,
  is_active: z.boolean().default(true),
  cli_tools: cliText,
  cli_settings: cliText,
  tenant_id: z.unknown().optional(),
});
const updateBody = z
  .object({
    provider: z.enum(KEY_PROVIDERS).optional(),
    key_name: z.string().trim().min(1).max(255).optional(),
    api_key: z.string().trim().min(1).max(4096).optional(),
    base_url: baseUrl,
    is_active: z.boolean().optional(),
    cli_tools: cliText,
    cli_settings: cliText,
    tenant_id: z.unknown().optional(),
  })
  .strict();

/** The tenant_id the caller supplied: body (POST/PUT) or query; both given and different is malformed. */
function suppliedTenantId(req: Request): unknown {
  const q = req.query?.tenant_id;
  const b =
    req.body && typeof req.body === 'object' && !Array.isArray(req.body)
      ? (req.body as Record<string, unknown>).tenant_id
      : undefined;
  if (b === undefined || b === null) return q;
  if (q === undefined) return b;
  const pq = parseTenantIdParam(q);
  return pq !== 'invalid' && pq === parseTenantIdParam(b) ? b : 'conflicting';
}

/** Key ids are positive integers; anything else cannot exist (and answers like a missing key). */
const keyIdOf = (raw: unknown): number | null =>
  typeof raw === 'string' && /^[1-9][0-9]{0,9}$/.test(raw) && Number(raw) <= 2_147_483_647
    ? Number(raw)
    : null;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const tenantKeyAnswer = z.looseObject({
  id: z.number().int(),
  tenant_id: z.number().int().nullable(),
  provider: z.string(),
  key_name: z.string(),
  masked_key: z.string(),
  base_url: z.string().nullable(),
  is_active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
const keyAnswer = z.looseObject({ success: z.literal(true), key: tenantKeyAnswer });
// The target tenant comes from `tenant_id` in the query or the body (suppliedTenantId): required for a
// system administrator, and a 400 when it names no tenant.
const TARGET = 'A system administrator names the tenant with `tenant_id` (query or body).';
const putKey = endpoint({
  tags: ['api-keys'],
  summary: 'Update a tenant API key',
  description: TARGET,
  body: updateBody,
  responses: { 200: keyAnswer },
});
const deleteKey = endpoint({
  tags: ['api-keys'],
  summary: 'Delete a tenant API key',
  description: TARGET,
  errors: [400],
  responses: { 200: z.looseObject({ success: z.literal(true) }) },
});
const listKeys = endpoint({
  tags: ['api-keys'],
  summary: "A tenant's API keys (masked)",
  description: TARGET,
  errors: [400],
  responses: {
    200: z.looseObject({
      success: z.literal(true),
      tenant_id: z.number().int(),
      keys: z.array(tenantKeyAnswer),
    }),
  },
});
const createKey = endpoint({
  tags: ['api-keys'],
  summary: 'Store a tenant API key (encrypted at rest)',
  description: TARGET,
  body: createBody,
  responses: { 201: keyAnswer },
});

export function apiKeysRouter(deps: AppDeps): Router {
  const r = Router();
  r.use(authenticate(deps), requireAdmin);
  const keys = () => tenantApiKeysRepository(deps.database);
  const secret = () => storageKey(deps.settings);

  /** Not even the masked key of a system administrator's key is shown to a tenant administrator. */
  const keyView = (k: TenantKeyRow, viewer: Request) => {
    let masked = '****';
    try {
      if (!k.createdBySystemAdmin || isSystemAdmin(viewer.auth.user))
        masked = maskKey(decryptSecret(k.encryptedKey, secret()));
    } catch {}
    return {
      id: k.id,
      tenant_id: k.tenantId,
      provider: k.provider,
      key_name: k.keyName,
      masked_key: masked,
      base_url: k.baseUrl,
      is_active: k.isActive,
      cli_tools: k.cliTools,
      cli_settings: k.cliSettings,
      created_by: k.createdBy,
      created_by_system_admin: k.createdBySystemAdmin,
      created_at: k.createdAt.toISOString(),
      updated_at: k.updatedAt.toISOString(),
    };
  };

  const audit = (
    req: Request,
    action: KeyAction,
    targetTenantId: number | null,
    result: KeyResult,
    key: { id?: number | null; name?: string | null } = {},
    extra: Record<string, unknown> = {},
  ) =>
    writeAudit(deps, req, {
      action,
      resourceType: 'api_key',
      resourceId: key.id ?? undefined,
      targetTenantId,
      success: result === 'success',
      severity: result === 'success' ? 'info' : 'warning',
      details: {
        actor_user_id: req.auth.user.id,
        actor_tenant_id: req.auth.user.tenantId,
        target_tenant_id: targetTenantId,
        action,
        api_key_id: key.id ?? null,
        api_key_name: key.name ?? null,
        result,
        request_id: requestIdOf(req),
        ...extra,
      },
    });

  /** The rules table, plus: a denied cross-tenant attempt is audited; a platform admin's target must exist. */
  const decide = async (
    req: Request,
    action: KeyAction,
    keyId?: number | null,
  ): Promise<KeyTenantDecision> => {
    const raw = suppliedTenantId(req);
    let d: KeyTenantDecision;
    try {
      d = resolveKeyTenant(req.auth.user, req.auth.permissions, raw);
    } catch (err) {
      if (err instanceof ForbiddenError && err.message === TENANT_KEY_ERRORS.crossTenant) {
        const target = parseTenantIdParam(raw);
        await audit(
          req,
          action,
          typeof target === 'number' ? target : null,
          'denied',
          { id: keyId },
          { reason: 'cross_tenant' },
        );
      }
      throw err;
    }
    if (isSystemAdmin(req.auth.user) && !(await tenantsRepository(deps.database).findById(d.tenantId)))
      throw new BadRequestError(TENANT_KEY_ERRORS.invalid);
    return d;
  };

  /** The key inside the decided tenant, or 403 (audited as `not_found` or `denied`). */
  const keyIn = async (req: Request, action: KeyAction, d: KeyTenantDecision, keyId: number | null) => {
    const k = keyId != null ? await keys().findInTenant(keyId, d.tenantId) : undefined;
    if (k?.createdBySystemAdmin && !isSystemAdmin(req.auth.user)) {
      await audit(
        req,
        action,
        d.tenantId,
        'denied',
        { id: k.id, name: k.keyName },
        { reason: 'system_admin_key' },
      );
      throw new ForbiddenError(SYSTEM_ADMIN_KEY);
    }
    if (k) return k;
    const result: KeyResult = keyId != null && (await keys().exists(keyId)) ? 'denied' : 'not_found';
    await audit(req, action, d.tenantId, result, { id: keyId });
    throw new ForbiddenError(TENANT_KEY_ERRORS.keyNotFound);
  };

  r.get('/', listKeys, async (req, res) => {
    const d = await decide(req, 'API_KEY_READ');
    const rows = await keys().listForTenant(d.tenantId);
    await audit(req, 'API_KEY_READ', d.tenantId, 'success', {}, { count: rows.length });
    res.json({ success: true, tenant_id: d.tenantId, keys: rows.map((k) => keyView(k, req)) });
  });

  r.post('/', createKey, async (req, res) => {
    const d = await decide(req, 'API_KEY_CREATE');
    const body = createKey.body(req);
    const bySystemAdmin = isSystemAdmin(req.auth.user);
    const base = await checkKeyBaseUrl(
      body.base_url,
      bySystemAdmin ? 'system_admin' : 'tenant_admin',
      deps.settings,
    );
    const created = await keys().create(
      {
        tenantId: d.tenantId,
        provider: body.provider,
        keyName: body.key_name,
        encryptedKey: encryptSecret(body.api_key, secret()),
        keyHash: keyHash(body.api_key),
        baseUrl: base.url,
        isActive: body.is_active,
        createdBy: req.auth.user.id,
        createdBySystemAdmin: bySystemAdmin,
        cliTools: body.cli_tools ?? null,
        cliSettings: body.cli_settings ?? null,
      },
      deps.now(),
    );
    await audit(
      req,
      'API_KEY_CREATE',
      d.tenantId,
      'success',
      { id: created.id, name: created.keyName },
      { provider: created.provider, base_url_host: base.host },
    );
    res.status(201).json({ success: true, key: keyView(created, req) });
  });

  r.put('/:key_id', putKey, async (req, res) => {
    const keyId = keyIdOf(req.params.key_id);
    const d = await decide(req, 'API_KEY_UPDATE', keyId);
    const existing = await keyIn(req, 'API_KEY_UPDATE', d, keyId);
    const body = putKey.body(req);
    const patch: TenantKeyPatch = {};
    if (body.provider !== undefined) patch.provider = body.provider;
    if (body.key_name !== undefined) patch.keyName = body.key_name;
    if (body.api_key !== undefined) {
      patch.encryptedKey = encryptSecret(body.api_key, secret());
      patch.keyHash = keyHash(body.api_key);
    }
    const bySystemAdmin = isSystemAdmin(req.auth.user);
    let baseUrlHost: string | null | undefined;
    if (body.base_url !== undefined) {
      const base = await checkKeyBaseUrl(
        body.base_url,
        bySystemAdmin ? 'system_admin' : 'tenant_admin',
        deps.settings,
      );
      patch.baseUrl = base.url;
      baseUrlHost = base.host;
    }
    if (body.is_active !== undefined) patch.isActive = body.is_active;
    if (body.cli_tools !== undefined) patch.cliTools = body.cli_tools;
    if (body.cli_settings !== undefined) patch.cliSettings = body.cli_settings;
    if (!Object.keys(patch).length) throw new BadRequestError('Nothing to update');
    // A system administrator who repoints or re-keys a key takes it over: it may now point anywhere.
    if (bySystemAdmin && (patch.baseUrl !== undefined || patch.encryptedKey !== undefined))
      patch.createdBySystemAdmin = true;
    await keys().update(existing.id, d.tenantId, patch, deps.now());
    const updated = (await keys().findInTenant(existing.id, d.tenantId))!;
    await audit(
      req,
      'API_KEY_UPDATE',
      d.tenantId,
      'success',
      { id: updated.id, name: updated.keyName },
      {
        changed: Object.keys(patch)
          .filter((f) => f !== 'encryptedKey' && f !== 'keyHash' && f !== 'createdBySystemAdmin')
          .concat(patch.encryptedKey ? ['api_key'] : []),
        ...(baseUrlHost !== undefined ? { base_url_host: baseUrlHost } : {}),
      },
    );
    res.json({ success: true, key: keyView(updated, req) });
  });

  r.delete('/:key_id', deleteKey, async (req, res) => {
    const keyId = keyIdOf(req.params.key_id);
    const d = await decide(req, 'API_KEY_DELETE', keyId);
    const existing = await keyIn(req, 'API_KEY_DELETE', d, keyId);
    await keys().delete(existing.id, d.tenantId);
    await audit(req, 'API_KEY_DELETE', d.tenantId, 'success', { id: existing.id, name: existing.keyName });
    res.json({ success: true });
  });

  return r;
}
