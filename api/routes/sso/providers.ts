// /api/sso/providers (spec document 2, "Single sign-on"): list, register, disable.
//
// Listing shows public fields only (name, provider_type, login_url; tenant_id for administrators),
// never config, secrets or certificates, and only active providers:
//   - unauthenticated (a login page): the platform-wide providers, plus the providers of the tenant
//     named by `?tenant=<slug>` when that tenant is active and has sso_enabled;
//   - authenticated: platform-wide providers plus those of the caller's tenant (system administrators:
//     every active provider).
// Register (POST) needs a system administrator, who picks the tenant (or none: platform-wide). Only
// system administrators register because a provider's URLs are fetched by the server (discovery,
// metadata, token, JWKS, userinfo) and may name internal hosts, which is the normal case for a
// self-hosted identity provider; the egress policy for tenant-written URLs therefore does not apply,
// and a tenant admin must not be able to make the server fetch an address of its choosing.
// Disable (DELETE) needs an administrator; a tenant admin disables only its own tenant's providers.
// Secrets are encrypted before storage; names are never reused (409).
import { Router } from 'express';
import { z } from 'zod';
import { ssoProvidersRepository } from '../../../db/repositories/sso-providers.ts';
import { tenantsRepository } from '../../../db/repositories/tenants.ts';
import { isSystemAdmin } from '../../../domain/access.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../domain/errors.ts';
import {
  type OAuthProviderConfig,
  oauth2RegistrationSchema,
  oidcRegistrationSchema,
  providerNameSchema,
} from '../../../domain/sso/provider-config.ts';
import { parseTenantIdParam } from '../../../domain/tenant-scope.ts';
import { tenantRefusal } from '../../../domain/tenants.ts';
import { sealSsoSecret } from '../../../services/sso/cipher.ts';
import { tenantAllowsSso } from '../../../services/sso/providers.ts';
import { parseSamlRegistration } from '../../../services/sso/saml/registration.ts';
import { writeAudit } from '../../audit.ts';
import type { AppDeps } from '../../deps.ts';
import { authenticate, requireAdmin, resolveSession } from '../../middleware/auth.ts';
import { parseInput } from '../../middleware/validate.ts';
import { endpoint } from '../../openapi/endpoint.ts';

const headSchema = z.object({
  name: providerNameSchema,
  provider_type: z.enum(['oauth2', 'oidc', 'saml'], { error: 'must be one of oauth2, oidc, saml' }),
  tenant_id: z.unknown().optional(),
});

export const loginUrlOf = (name: string) => `/api/sso/login/${encodeURIComponent(name)}`;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const deleteSsoProvidersName = endpoint({ tags: ['sso'] });

export function ssoProvidersRouter(deps: AppDeps): Router {
  const r = Router();
  const repo = () => ssoProvidersRepository(deps.database);
  const auth = authenticate(deps);

  r.get('/api/sso/providers', async (req, res) => {
    const session = await resolveSession(deps, req);
    let rows: Awaited<ReturnType<ReturnType<typeof repo>['listActive']>>;
    let admin = false;
    if (session.ok) {
      const u = session.auth.user;
      admin = isSystemAdmin(u) || u.role === 'tenant_admin' || session.auth.permissions.has('admin_access');
      rows = await repo().listActive(isSystemAdmin(u) ? undefined : u.tenantId != null ? [u.tenantId] : []);
    } else {
      const slug = typeof req.query.tenant === 'string' ? req.query.tenant.slice(0, 100) : undefined;
      const tenant = slug ? await tenantsRepository(deps.database).findBySlug(slug) : undefined;
      const visible =
        tenant && !tenantRefusal(tenant) && (await tenantAllowsSso(deps.database, tenant.id))
          ? [tenant.id]
          : [];
      rows = await repo().listActive(visible);
    }
    res.json({
      providers: rows.map((p) => ({
        name: p.name,
        provider_type: p.providerType,
        login_url: loginUrlOf(p.name),
        ...(admin ? { tenant_id: p.tenantId } : {}),
      })),
    });
  });

  /** The tenant a new provider belongs to (null: platform-wide), as the system administrator chose. */
  const targetTenant = async (raw: unknown): Promise<number | null> => {
    const given = parseTenantIdParam(raw);
    if (given === 'invalid') throw new BadRequestError('tenant_id: must be a positive integer');
    if (given === undefined) return null;
    if (!(await tenantsRepository(deps.database).findById(given)))
      throw new BadRequestError('tenant_id: tenant not found');
    return given;
  };

  r.post('/api/sso/providers', auth, requireAdmin, async (req, res) => {
    if (!isSystemAdmin(req.auth.user))
      throw new ForbiddenError('Only a system administrator can register an identity provider');
    const head = parseInput(headSchema, req.body);
    const tenantId = await targetTenant(head.tenant_id);
    let config: Record<string, unknown>;
    if (head.provider_type === 'saml') {
      config = (await parseSamlRegistration(req.body)).config;
    } else {
      const body =
        head.provider_type === 'oidc'
          ? parseInput(oidcRegistrationSchema, req.body)
          : parseInput(oauth2RegistrationSchema, req.body);
      const stored: OAuthProviderConfig = {
        client_id: body.client_id,
        client_secret_encrypted: sealSsoSecret(deps, body.client_secret),
        redirect_uri: body.redirect_uri,
        scopes: body.scopes ?? [],
        attribute_mapping: { ...body.extra_params?.attribute_mapping, ...body.attribute_mapping },
        ...('issuer_url' in body ? { issuer_url: body.issuer_url } : {}),
        ...('token_url' in body
          ? {
              authorization_url: body.authorization_url,
              token_url: body.token_url,
              userinfo_url: body.userinfo_url,
              trust_email: body.trust_email === true,
            }
          : {}),
      };
      config = stored as unknown as Record<string, unknown>;
    }
    const created = await repo().register({
      name: head.name,
      providerType: head.provider_type,
      config: JSON.stringify(config),
      tenantId,
      createdAt: deps.now(),
    });
    if (created === 'duplicate') throw new ConflictError(`A provider named "${head.name}" already exists`);
    await writeAudit(deps, req, {
      action: 'SSO_PROVIDER_CREATE',
      resourceType: 'sso_provider',
      resourceId: head.name,
      severity: 'warning',
      targetTenantId: tenantId,
      details: { name: head.name, provider_type: head.provider_type, tenant_id: tenantId },
    });
    res.status(201).json({
      success: true,
      provider: {
        name: head.name,
        provider_type: head.provider_type,
        tenant_id: tenantId,
        login_url: loginUrlOf(head.name),
      },
    });
  });

  r.delete(
    '/api/sso/providers/:provider_name',
    deleteSsoProvidersName,
    auth,
    requireAdmin,
    async (req, res) => {
      const name = String(req.params.provider_name);
      const row = name.length <= 100 ? await repo().findByName(name) : undefined;
      if (!row?.isActive) throw new NotFoundError('Provider not found');
      const actor = req.auth.user;
      if (!isSystemAdmin(actor) && (actor.tenantId == null || row.tenantId !== actor.tenantId))
        throw new ForbiddenError('Cross-tenant access denied');
      await repo().disable(row.id);
      await writeAudit(deps, req, {
        action: 'SSO_PROVIDER_DISABLE',
        resourceType: 'sso_provider',
        resourceId: row.name,
        severity: 'warning',
        targetTenantId: row.tenantId,
        details: { name: row.name, provider_type: row.providerType, tenant_id: row.tenantId },
      });
      res.json({ success: true, message: `Provider ${row.name} disabled` });
    },
  );

  return r;
}
