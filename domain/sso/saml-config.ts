// The stored configuration of a SAML provider (the `config` JSON of its sso_providers row) and the
// pure rules over it. Registration (services/sso/saml/registration.ts) produces it once, from the
// spec's body; login and the ACS read it back through `samlConfigOf`, which refuses a row that does
// not have this shape rather than guessing. It holds no secret: the IdP's certificate is public and no
// private key of the IdP is ever accepted. The SP signs nothing (AuthnRequests go unsigned over the
// redirect binding; the IdP authenticates the user, we authenticate the IdP's response).
import { z } from 'zod';

export const SAML_NAMEID_FORMATS = [
  'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
] as const;

/** Clock skew tolerated on every SAML time window (Authentication 4: "small clock skew"). */
export const SAML_CLOCK_SKEW_MS = 2 * 60 * 1000;

/** Upper bound on a metadata document (XML given inline or fetched from idp_metadata_url). */
export const SAML_METADATA_MAX_BYTES = 1024 * 1024;

/** Upper bound on a posted SAMLResponse (base64 text) accepted by the ACS. */
export const SAML_RESPONSE_MAX_BYTES = 256 * 1024;

export const samlAttributeMappingSchema = z.object({
  email: z.string().min(1).max(256),
  username: z.string().min(1).max(256).optional(),
  name: z.string().min(1).max(256).optional(),
});

export const samlProviderConfigSchema = z.object({
  sp_entity_id: z.string().min(1),
  acs_url: z.string().min(1),
  idp_entity_id: z.string().min(1),
  idp_sso_url: z.string().min(1),
  /** Base64 DER bodies of the IdP's signing certificates (no PEM armour, no whitespace). */
  idp_signing_certs: z.array(z.string().min(1)).min(1),
  attribute_mapping: samlAttributeMappingSchema,
  idp_source: z.enum(['certificate', 'metadata_xml', 'metadata_url']),
  idp_metadata_url: z.string().optional(),
});

export type SamlProviderConfig = z.infer<typeof samlProviderConfigSchema>;
export type SamlAttributeMapping = z.infer<typeof samlAttributeMappingSchema>;

export const DEFAULT_SAML_ATTRIBUTE_MAPPING: SamlAttributeMapping = { email: 'email' };

/** The stored config of a SAML provider, or an error when the row is not a SAML config. */
export function samlConfigOf(config: unknown): SamlProviderConfig {
  const parsed = samlProviderConfigSchema.safeParse(config);
  if (!parsed.success) throw new Error('stored SAML provider configuration is invalid');
  return parsed.data;
}

/** PEM or bare base64 certificate text -> the base64 body (armour and whitespace removed). */
export function certificateBody(text: string): string {
  return text
    .replace(/-----BEGIN CERTIFICATE-----/g, '')
    .replace(/-----END CERTIFICATE-----/g, '')
    .replace(/\s+/g, '');
}

/** Base64 DER body -> PEM (64-character lines), the form samlify and xml-crypto accept. */
export function certificatePem(body: string): string {
  const lines = body.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
