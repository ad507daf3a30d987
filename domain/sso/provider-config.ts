// What a registered OAuth2/OIDC provider is: the registration body (zod, 400 naming the field) and the
// stored config shape. Pure. SAML registration is C's (services/sso/saml/registration.ts).
//
// Provider URLs are written by administrators, who may point them at internal or loopback identity
// providers (issue 12 item 1), so the egress policy for tenant-written keys does not apply; they must
// still be absolute http(s) URLs without credentials. The client secret is required for both types; it
// is encrypted by the caller before storage and never returned.
import { z } from 'zod';

export const PROVIDER_NAME_MAX = 100;

/** Names appear in URL paths (/api/sso/login/<name>): a plain, linear character check. */
export function isValidProviderName(name: string): boolean {
  if (name.length === 0 || name.length > PROVIDER_NAME_MAX) return false;
  for (const c of name) {
    const ok =
      (c >= 'a' && c <= 'z') ||
      (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9') ||
      c === '-' ||
      c === '_' ||
      c === '.';
    if (!ok) return false;
  }
  return name !== '.' && name !== '..';
}

export const providerNameSchema = z
  .string({ error: 'is required' })
  .refine(isValidProviderName, 'must be 1-100 characters of letters, digits, ".", "_" or "-"');

export const httpUrlSchema = z
  .string({ error: 'is required' })
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without credentials');

const claimName = z.string().trim().min(1).max(200);
export const attributeMappingSchema = z
  .object({
    subject: claimName.optional(),
    email: claimName.optional(),
    email_verified: claimName.optional(),
    username: claimName.optional(),
    name: claimName.optional(),
  })
  .strict();
export type AttributeMapping = z.infer<typeof attributeMappingSchema>;

const scopesSchema = z
  .union([z.string().max(1000), z.array(z.string().min(1).max(200)).max(50)])
  .transform((v) => (Array.isArray(v) ? v : v.split(' ')).map((s) => s.trim()).filter(Boolean));

const secret = z.string({ error: 'is required' }).min(1, 'is required').max(4096);
const clientId = z.string({ error: 'is required' }).trim().min(1, 'is required').max(1024);
const extraParams = z
  .object({ attribute_mapping: attributeMappingSchema.optional() })
  .passthrough()
  .optional();

export const oidcRegistrationSchema = z.object({
  issuer_url: httpUrlSchema,
  client_id: clientId,
  client_secret: secret,
  redirect_uri: httpUrlSchema,
  scopes: scopesSchema.optional(),
  attribute_mapping: attributeMappingSchema.optional(),
  extra_params: extraParams,
});

export const oauth2RegistrationSchema = z.object({
  client_id: clientId,
  client_secret: secret,
  authorization_url: httpUrlSchema,
  token_url: httpUrlSchema,
  userinfo_url: httpUrlSchema,
  redirect_uri: httpUrlSchema,
  scopes: scopesSchema,
  attribute_mapping: attributeMappingSchema.optional(),
  /** OAuth2 has no standard verified-email claim: the admin states whether the provider's email is verified. */
  trust_email: z.boolean().optional(),
  extra_params: extraParams,
});

/** The stored config of an OAuth2/OIDC provider (JSON in sso_providers.config). */
export interface OAuthProviderConfig {
  client_id: string;
  /** Fernet ciphertext. */
  client_secret_encrypted: string;
  redirect_uri: string;
  scopes: string[];
  issuer_url?: string;
  authorization_url?: string;
  token_url?: string;
  userinfo_url?: string;
  attribute_mapping: AttributeMapping;
  trust_email?: boolean;
}

export const DEFAULT_OIDC_SCOPES = ['openid', 'email', 'profile'];

export function oauthConfigOf(config: Record<string, unknown>): OAuthProviderConfig {
  return config as unknown as OAuthProviderConfig;
}
