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
import { readLargeJson } from '../../middleware/body.ts';
import { parseInput } from '../../middleware/validate.ts';
import { endpoint } from '../../openapi/endpoint.ts';

const headSchema = z.object({
  name: providerNameSchema,
  provider_type: z.enum(['oauth2', 'oidc', 'saml'], { error: 'must be one of oauth2, oidc, saml' }),
  tenant_id: z.unknown().optional(),
});

export const loginUrlOf = (name: string) => `/api/sso/login/${encodeURIComponent(name)}`;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const deleteSsoProvidersName = endpoint({
  tags: ['sso'],
  summary: 'Disable an identity provider',
  responses: { 200: z.looseObject({ success: z.literal(true), message: z.string() }) },
});
const providerView = z.looseObject({
  name: z.string(),
  provider_type: z.enum(['oauth2', 'oidc', 'saml']),
  login_url: z.string(),
  tenant_id: z.number().int().nullable().optional().meta({ description: 'Administrators only' }),
});
const getSsoProviders = endpoint({
  tags: ['sso'],
  summary: 'Active identity providers (public fields only)',
  description:
    'Credentials optional. Without a session: the platform-wide providers plus those of the tenant named by ' +
    "`tenant` (when active with SSO enabled). With a session: platform-wide plus the caller tenant's " +
    '(system administrators: all), and `tenant_id` for administrators.',
  auth: 'public',
  query: z.object({
    // Read as sent: anything but a string names no tenant (never a 400 on a login page).
    tenant: z
      .unknown()
      .optional()
      .transform((v) => (typeof v === 'string' ? v.slice(0, 100) : undefined))
      .meta({ type: 'string', description: 'A tenant slug (used without a session)' }),
  }),
  responses: { 200: z.looseObject({ providers: z.array(providerView) }) },
});
// The fields beyond the head depend on provider_type: oidcRegistrationSchema,
// oauth2RegistrationSchema (domain/sso/provider-config.ts) or the SAML registration
// (services/sso/saml/registration.ts); each is checked after the head.
const postSsoProviders = endpoint({
  tags: ['sso'],
  summary: 'Register an identity provider (system administrators)',
  description:
    'The fields beyond name, provider_type and tenant_id depend on provider_type: oidc (issuer_url, client_id, ' +
    'client_secret, redirect_uri, scopes, attribute_mapping), oauth2 (authorization_url, token_url, userinfo_url, ' +
    'client_id, client_secret, redirect_uri, scopes, attribute_mapping, trust_email) or saml (IdP metadata or ' +
    'entity id, SSO URL and certificate). Secrets are stored encrypted and never returned.',
  body: headSchema
    .extend({
      tenant_id: headSchema.shape.tenant_id.meta({
        type: ['integer', 'null'],
        description: 'The tenant (absent or null: platform-wide)',
      }),
    })
    .loose(),
  responses: {
    201: z.looseObject({
      success: z.literal(true),
      provider: z.looseObject({
        name: z.string(),
        provider_type: z.enum(['oauth2', 'oidc', 'saml']),
        tenant_id: z.number().int().nullable(),
        login_url: z.string(),
      }),
    }),
  },
  errors: [409],
});

export function ssoProvidersRouter(deps: AppDeps): Router {
  const r = Router();
  const repo = () => ssoProvidersRepository(deps.database);
  const auth = authenticate(deps);

  r.get('/api/sso/providers', getSsoProviders, async (req, res) => {
    const session = await resolveSession(deps, req);
    let rows: Awaited<ReturnType<ReturnType<typeof repo>['listActive']>>;
    let admin = false;
    if (session.ok) {
      const u = session.auth.user;
      admin = isSystemAdmin(u) || u.role === 'tenant_admin' || session.auth.permissions.has('admin_access');
      rows = await repo().listActive(isSystemAdmin(u) ? undefined : u.tenantId != null ? [u.tenantId] : []);
    } else {
      const slug = getSsoProviders.query(req).tenant;
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

  r.post('/api/sso/providers', postSsoProviders, auth, requireAdmin, async (req, res) => {
    if (!isSystemAdmin(req.auth.user))
      throw new ForbiddenError('Only a system administrator can register an identity provider');
    // Inline SAML metadata may take up to 1 MiB (SAML_METADATA_MAX_BYTES): more than the 1 MB default.
    await readLargeJson(req, res);
    const head = postSsoProviders.body(req);
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
