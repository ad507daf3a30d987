// /api/sso/providers (spec document 2, "Single sign-on"): list, register, disable; and, beyond the
// spec (issue 28 item 4), read and replace one provider's settings (system administrators).
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
// Secrets are encrypted before storage; names are never reused (409). A redirect_uri must end with the
// provider's own callback path (domain/sso/provider-config.ts callbackPathOf): any other address could
// never receive its logins.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { type SsoProviderRow, ssoProvidersRepository } from '../../../db/repositories/sso-providers.ts';
import { tenantsRepository } from '../../../db/repositories/tenants.ts';
import { isSystemAdmin } from '../../../domain/access.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../domain/errors.ts';
import { redirectUriRefusal } from '../../../domain/sso/callback-path.ts';
import {
  type OAuthProviderConfig,
  oauth2RegistrationSchema,
  oauthConfigOf,
  oidcRegistrationSchema,
  providerNameSchema,
} from '../../../domain/sso/provider-config.ts';
import { certificatePem, samlConfigOf } from '../../../domain/sso/saml-config.ts';
import { parseTenantIdParam } from '../../../domain/tenant-scope.ts';
import { tenantRefusal } from '../../../domain/tenants.ts';
import { parseInput } from '../../../domain/validation.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { sealSsoSecret } from '../../../services/sso/cipher.ts';
import { tenantAllowsSso } from '../../../services/sso/providers.ts';
import { parseSamlRegistration } from '../../../services/sso/saml/registration.ts';
import { authenticate, requireAdmin, resolveSession } from '../../middleware/auth.ts';
import { readLargeJson } from '../../middleware/body.ts';
import { endpoint } from '../../openapi/endpoint.ts';

const headSchema = z.object({
  name: providerNameSchema,
  provider_type: z.enum(['oauth2', 'oidc', 'saml'], { error: 'must be one of oauth2, oidc, saml' }),
  tenant_id: z.unknown().optional(),
});

/** A provider's settings in registration field names, without any secret (see editableView). */
function editableSettings(row: SsoProviderRow) {
  const head = { name: row.name, provider_type: row.providerType, tenant_id: row.tenantId };
  if (row.providerType === 'saml') {
    const c = samlConfigOf(JSON.parse(row.config));
    return {
      ...head,
      client_id: c.sp_entity_id,
      redirect_uri: c.acs_url,
      issuer_url: c.idp_entity_id,
      authorization_url: c.idp_sso_url,
      idp_x509_cert: c.idp_signing_certs[0] ? certificatePem(c.idp_signing_certs[0]) : '',
      attribute_mapping: c.attribute_mapping,
      has_client_secret: false,
    };
  }
  const { client_secret_encrypted, ...c } = oauthConfigOf(JSON.parse(row.config));
  return { ...head, ...c, has_client_secret: Boolean(client_secret_encrypted) };
}

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

// The settings a system administrator edits (GET, PUT /api/sso/providers/<name>), in the registration
// body's field names. Never the client secret (plaintext or ciphertext): `has_client_secret` says one
// is stored, and a PUT without client_secret (or with an empty one) keeps it.
const editableView = z.looseObject({
  name: z.string(),
  provider_type: z.enum(['oauth2', 'oidc', 'saml']),
  tenant_id: z.number().int().nullable(),
  client_id: z.string(),
  redirect_uri: z.string(),
  has_client_secret: z.boolean(),
});
const getSsoProvidersName = endpoint({
  tags: ['sso'],
  summary: "An identity provider's editable settings (system administrators; never the secret)",
  responses: { 200: z.looseObject({ provider: editableView }) },
});
const putSsoProvidersName = endpoint({
  tags: ['sso'],
  summary: "Replace an identity provider's settings (system administrators)",
  description:
    "The registration body of the provider's type (name and provider_type cannot change). An absent or " +
    'empty client_secret keeps the stored one. redirect_uri must end with /api/sso/callback/<name> ' +
    '(SAML: /api/sso/acs/<name>).',
  body: z.looseObject({ tenant_id: headSchema.shape.tenant_id.meta({ type: ['integer', 'null'] }) }),
  responses: { 200: z.looseObject({ success: z.literal(true), provider: editableView }) },
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

  /**
   * The stored config of a provider from a registration (or update) body, after the field checks and
   * the callback-path rule. `keptSecret`: on an update, the stored ciphertext kept when client_secret
   * is absent or empty (a stored secret is never shown, so the form leaves it blank).
   */
  const configOf = async (
    name: string,
    type: 'oauth2' | 'oidc' | 'saml',
    raw: unknown,
    keptSecret?: string,
  ): Promise<Record<string, unknown>> => {
    const input = { ...(raw as Record<string, unknown>) };
    const keep =
      keptSecret !== undefined && (input.client_secret === undefined || input.client_secret === '');
    // A stand-in that satisfies the schema's "required"; `keep` decides, never the value.
    if (keep) input.client_secret = 'kept';
    const refusal = redirectUriRefusal(input.redirect_uri, name, type);
    if (type === 'saml') {
      const { config } = await parseSamlRegistration(input);
      if (refusal) throw new BadRequestError(refusal);
      return config;
    }
    const body =
      type === 'oidc'
        ? parseInput(oidcRegistrationSchema, input)
        : parseInput(oauth2RegistrationSchema, input);
    if (refusal) throw new BadRequestError(refusal);
    const stored: OAuthProviderConfig = {
      client_id: body.client_id,
      client_secret_encrypted: keep ? keptSecret : sealSsoSecret(deps, body.client_secret),
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
    return stored as unknown as Record<string, unknown>;
  };

  r.post('/api/sso/providers', postSsoProviders, auth, requireAdmin, async (req, res) => {
    if (!isSystemAdmin(req.auth.user))
      throw new ForbiddenError('Only a system administrator can register an identity provider');
    // Inline SAML metadata may take up to 1 MiB (SAML_METADATA_MAX_BYTES): more than the 1 MB default.
    await readLargeJson(req, res);
    const head = postSsoProviders.body(req);
    const tenantId = await targetTenant(head.tenant_id);
    const config = await configOf(head.name, head.provider_type, req.body);
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

  /** The active provider named in the path (404 otherwise). */
  const activeNamed = async (req: Request) => {
    const name = String(req.params.provider_name);
    const row = name.length <= 100 ? await repo().findByName(name) : undefined;
    if (!row?.isActive) throw new NotFoundError('Provider not found');
    return row;
  };
  const editable = async (req: Request) => {
    if (!isSystemAdmin(req.auth.user))
      throw new ForbiddenError('Only a system administrator can edit an identity provider');
    return activeNamed(req);
  };

  r.get('/api/sso/providers/:provider_name', getSsoProvidersName, auth, requireAdmin, async (req, res) => {
    res.json({ provider: editableSettings(await editable(req)) });
  });

  r.put('/api/sso/providers/:provider_name', putSsoProvidersName, auth, requireAdmin, async (req, res) => {
    const row = await editable(req);
    await readLargeJson(req, res);
    const given = putSsoProvidersName.body(req);
    if (req.body.provider_type !== undefined && req.body.provider_type !== row.providerType)
      throw new BadRequestError('provider_type: cannot change; register a new provider instead');
    const tenantId = await targetTenant(given.tenant_id);
    const before = JSON.parse(row.config) as { client_secret_encrypted?: string };
    const config = await configOf(
      row.name,
      row.providerType as 'oauth2' | 'oidc' | 'saml',
      req.body,
      before.client_secret_encrypted,
    );
    await repo().update(row.id, { config: JSON.stringify(config), tenantId });
    await writeAudit(deps, req, {
      action: 'SSO_PROVIDER_UPDATE',
      resourceType: 'sso_provider',
      resourceId: row.name,
      severity: 'warning',
      targetTenantId: tenantId,
      details: { name: row.name, provider_type: row.providerType, tenant_id: tenantId },
    });
    res.json({
      success: true,
      provider: editableSettings({ ...row, config: JSON.stringify(config), tenantId }),
    });
  });

  r.delete(
    '/api/sso/providers/:provider_name',
    deleteSsoProvidersName,
    auth,
    requireAdmin,
    async (req, res) => {
      const row = await activeNamed(req);
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
