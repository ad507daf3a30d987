// The SSO provider registry: which providers exist, which may log people in right now, and the one
// way to read a provider's stored secret. `sso_providers.config` is JSON text whose secret fields
// (client_secret) are Fernet ciphertext; the SsoProvider handed to login code carries that config
// as stored, so a secret is decrypted only at the moment of use (decryptProviderSecret).
//
// A provider may log someone in only when it is active and, for a tenant's provider, the tenant exists,
// is not deleted and has tenant_settings.sso_enabled true (spec document 2, "Tenants"). Platform-wide
// providers (tenant_id null) are checked against the signed-in user's tenant later (sign-in.ts).
import { and, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../../db/client.ts';
import { tenantsRepository } from '../../db/repositories/tenants.ts';
import { AppError, ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import type { KeySettings } from '../secrets.ts';
import { openSsoSecret } from './cipher.ts';

export type SsoProviderType = 'oauth2' | 'oidc' | 'saml';
export const SSO_PROVIDER_TYPES: readonly SsoProviderType[] = ['oauth2', 'oidc', 'saml'];

export interface SsoProvider {
  id: number;
  name: string;
  providerType: SsoProviderType;
  tenantId: number | null;
  /** The stored config: secrets are still ciphertext. */
  config: Record<string, unknown>;
}

export interface ProviderDeps {
  database: DatabaseHandle;
  settings: KeySettings;
}

export const SSO_DISABLED_FOR_TENANT = 'Single sign-on is disabled for this tenant';
export const UNKNOWN_PROVIDER = 'Unknown or disabled sign-in provider';

const parseConfig = (text: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

export function toSsoProvider(row: {
  id: number;
  name: string;
  providerType: string;
  tenantId: number | null;
  config: string;
}): SsoProvider {
  return {
    id: row.id,
    name: row.name,
    providerType: row.providerType as SsoProviderType,
    tenantId: row.tenantId,
    config: parseConfig(row.config),
  };
}

/** Whether a tenant allows SSO logins (tenant_settings.sso_enabled; missing row = spec default false). */
export async function tenantAllowsSso(database: DatabaseHandle, tenantId: number): Promise<boolean> {
  const repo = tenantsRepository(database);
  const tenant = await repo.findById(tenantId);
  if (!tenant) return false;
  const settings = await repo.settingsOf(tenantId);
  return settings?.ssoEnabled === true;
}

/**
 * The active provider of this name, ready for a login. NotFound (404) when unknown or disabled;
 * Forbidden (403, "Single sign-on is disabled for this tenant") when its tenant has SSO off or is gone.
 */
export async function loadActiveProvider(deps: ProviderDeps, name: string): Promise<SsoProvider> {
  const { db, t } = deps.database;
  if (typeof name !== 'string' || name.length === 0 || name.length > 100)
    throw new NotFoundError(UNKNOWN_PROVIDER);
  const [row] = await db
    .select()
    .from(t.ssoProviders)
    .where(and(eq(t.ssoProviders.name, name), eq(t.ssoProviders.isActive, true)));
  if (!row) throw new NotFoundError(UNKNOWN_PROVIDER);
  if (row.tenantId != null && !(await tenantAllowsSso(deps.database, row.tenantId)))
    throw new ForbiddenError(SSO_DISABLED_FOR_TENANT);
  return toSsoProvider(row);
}

/** The plaintext of a secret stored in a provider's config. Never log or return it. */
export function decryptProviderSecret(deps: { settings: KeySettings }, ciphertext: string): string {
  try {
    return openSsoSecret(deps, ciphertext);
  } catch {
    // A key change or a corrupted row: the provider cannot be used until it is registered again.
    throw new AppError(500, 'The sign-in provider is misconfigured');
  }
}
