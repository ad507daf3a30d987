// Registering a SAML provider: the spec's body (document 2, "SAML provider registration body") turned
// into the stored config of domain/sso/saml-config.ts. B's POST /api/sso/providers validates the name
// and provider_type and calls `parseSamlRegistration` for the rest.
//
// The IdP comes from exactly one source, tried in this order:
//   1. extra_params.idp_metadata_xml (inline metadata),
//   2. extra_params.idp_metadata_url, fetched ONCE here (http/https only, redirects not followed,
//      10 s timeout, 1 MiB cap; only system administrators register providers, and they may point
//      at internal hosts (issue 12 item 1), so the egress policy of tenant-written URLs is not used),
//   3. authorization_url (IdP SSO URL) + issuer_url / extra_params.idp_entity_id + idp_x509_cert.
// Every certificate must parse as X.509; anything carrying a private key is refused (we never hold
// the IdP's key). Every refusal is a 400 naming the field. The SP signs nothing, so no key pair is made.
import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { BadRequestError } from '../../../domain/errors.ts';
import {
  certificateBody,
  DEFAULT_SAML_ATTRIBUTE_MAPPING,
  SAML_METADATA_MAX_BYTES,
  type SamlProviderConfig,
  samlAttributeMappingSchema,
} from '../../../domain/sso/saml-config.ts';
import { MetadataError, readIdpMetadata } from '../../../domain/sso/saml-metadata.ts';
import { parseInput } from '../../../domain/validation.ts';

export const METADATA_FETCH_TIMEOUT_MS = 10_000;

const httpUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without credentials');

const registrationSchema = z.object({
  client_id: z.string().trim().min(1).max(1024),
  redirect_uri: httpUrl,
  authorization_url: httpUrl.optional(),
  issuer_url: z.string().trim().min(1).max(1024).optional(),
  extra_params: z
    .object({
      idp_x509_cert: z
        .string()
        .max(64 * 1024)
        .optional(),
      idp_entity_id: z.string().trim().min(1).max(1024).optional(),
      idp_metadata_xml: z.string().optional(),
      idp_metadata_url: httpUrl.optional(),
      attribute_mapping: samlAttributeMappingSchema.partial().optional(),
    })
    .optional(),
});

/** Base64 DER body of a PEM or bare-base64 certificate; 400 naming `field` when it is not X.509. */
export function parseCertificate(text: string, field: string): string {
  if (/PRIVATE KEY/i.test(text))
    throw new BadRequestError(`${field}: must be a certificate, not a private key`);
  const body = certificateBody(text);
  if (!body || !/^[A-Za-z0-9+/]+={0,2}$/.test(body))
    throw new BadRequestError(`${field}: is not an X.509 certificate`);
  try {
    new X509Certificate(Buffer.from(body, 'base64'));
  } catch {
    throw new BadRequestError(`${field}: is not an X.509 certificate`);
  }
  return body;
}

/** GET the metadata once: http(s) only, no redirects, a timeout and a byte cap. */
export async function fetchIdpMetadata(url: string, timeoutMs = METADATA_FETCH_TIMEOUT_MS): Promise<string> {
  const field = 'extra_params.idp_metadata_url';
  let res: Response;
  try {
    res = await fetch(url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
      headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' },
    });
  } catch {
    throw new BadRequestError(`${field}: could not be fetched`);
  }
  return readCapped(res, field);
}

async function readCapped(res: Response, field: string): Promise<string> {
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw new BadRequestError(`${field}: answered HTTP ${res.status} (redirects are not followed)`);
  }
  const declared = Number(res.headers.get('content-length') ?? 'NaN');
  if (Number.isFinite(declared) && declared > SAML_METADATA_MAX_BYTES) {
    await res.body?.cancel().catch(() => {});
    throw new BadRequestError(`${field}: metadata is larger than ${SAML_METADATA_MAX_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body ?? []) {
      total += chunk.length;
      if (total > SAML_METADATA_MAX_BYTES) {
        await res.body?.cancel().catch(() => {});
        throw new BadRequestError(`${field}: metadata is larger than ${SAML_METADATA_MAX_BYTES} bytes`);
      }
      chunks.push(Buffer.from(chunk));
    }
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    throw new BadRequestError(`${field}: could not be fetched`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function metadataOf(xml: string, field: string) {
  if (Buffer.byteLength(xml, 'utf8') > SAML_METADATA_MAX_BYTES)
    throw new BadRequestError(`${field}: metadata is larger than ${SAML_METADATA_MAX_BYTES} bytes`);
  try {
    const md = readIdpMetadata(xml);
    md.signingCerts = md.signingCerts.map((c) => parseCertificate(c, field));
    return md;
  } catch (err) {
    if (err instanceof MetadataError) throw new BadRequestError(`${field}: ${err.message}`);
    throw err;
  }
}

/** The stored config of a new SAML provider; 400 naming the field for anything wrong. */
export async function parseSamlRegistration(body: unknown): Promise<{ config: Record<string, unknown> }> {
  const input = parseInput(registrationSchema, body);
  const extra = input.extra_params ?? {};
  if (input.issuer_url && extra.idp_entity_id && input.issuer_url !== extra.idp_entity_id)
    throw new BadRequestError('extra_params.idp_entity_id: differs from issuer_url');
  const declaredEntityId = extra.idp_entity_id ?? input.issuer_url;

  let idp: { entityId: string; ssoRedirectUrl: string; signingCerts: string[] };
  let source: SamlProviderConfig['idp_source'];
  if (extra.idp_metadata_xml !== undefined) {
    idp = metadataOf(extra.idp_metadata_xml, 'extra_params.idp_metadata_xml');
    source = 'metadata_xml';
  } else if (extra.idp_metadata_url !== undefined) {
    const xml = await fetchIdpMetadata(extra.idp_metadata_url);
    idp = metadataOf(xml, 'extra_params.idp_metadata_url');
    source = 'metadata_url';
  } else {
    if (!input.authorization_url)
      throw new BadRequestError(
        'authorization_url: required (the IdP SSO URL) unless extra_params.idp_metadata_xml or idp_metadata_url is given',
      );
    if (!declaredEntityId) throw new BadRequestError('issuer_url: required (the IdP entity id)');
    if (!extra.idp_x509_cert) throw new BadRequestError('extra_params.idp_x509_cert: required');
    idp = {
      entityId: declaredEntityId,
      ssoRedirectUrl: input.authorization_url,
      signingCerts: [parseCertificate(extra.idp_x509_cert, 'extra_params.idp_x509_cert')],
    };
    source = 'certificate';
  }
  if (source !== 'certificate') {
    if (declaredEntityId && declaredEntityId !== idp.entityId)
      throw new BadRequestError(
        `${input.issuer_url ? 'issuer_url' : 'extra_params.idp_entity_id'}: differs from the metadata's entityID`,
      );
    const parsed = httpUrl.safeParse(idp.ssoRedirectUrl);
    if (!parsed.success)
      throw new BadRequestError(
        `extra_params.${`idp_${source}`}: SingleSignOnService Location is not an http(s) URL`,
      );
    if (extra.idp_x509_cert) {
      // An explicit certificate narrows the metadata's set to that one (it must be among them).
      const pinned = parseCertificate(extra.idp_x509_cert, 'extra_params.idp_x509_cert');
      if (!idp.signingCerts.includes(pinned))
        throw new BadRequestError('extra_params.idp_x509_cert: is not a signing certificate of the metadata');
      idp.signingCerts = [pinned];
    }
  }

  const config: SamlProviderConfig = {
    sp_entity_id: input.client_id,
    acs_url: input.redirect_uri,
    idp_entity_id: idp.entityId,
    idp_sso_url: idp.ssoRedirectUrl,
    idp_signing_certs: idp.signingCerts,
    attribute_mapping: { ...DEFAULT_SAML_ATTRIBUTE_MAPPING, ...(extra.attribute_mapping ?? {}) },
    idp_source: source,
    ...(source === 'metadata_url' ? { idp_metadata_url: extra.idp_metadata_url } : {}),
  };
  return { config };
}
