// Reading an IdP's SAML metadata document (given inline at registration or fetched once from
// idp_metadata_url) into the three things we keep: its entity id, its HTTP-Redirect SingleSignOnService
// URL, and its signing certificates. A document without an IDPSSODescriptor, a signing certificate or a
// redirect SSO URL is refused with the reason, which registration turns into a 400 naming the field.
import type { Element } from '@xmldom/xmldom';
import { certificateBody } from './saml-config.ts';
import { childElements, descendantElements, fullText, NS, parseUntrustedXml } from './saml-xml.ts';

export const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
export const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';

export interface IdpMetadata {
  entityId: string;
  ssoRedirectUrl: string;
  /** Base64 DER bodies. */
  signingCerts: string[];
}

export class MetadataError extends Error {}

export function readIdpMetadata(xml: string): IdpMetadata {
  let doc: ReturnType<typeof parseUntrustedXml>;
  try {
    doc = parseUntrustedXml(xml);
  } catch {
    throw new MetadataError('is not well-formed XML without a DTD');
  }
  const descriptors = descendantElements(doc, NS.metadata, 'IDPSSODescriptor');
  if (descriptors.length === 0) throw new MetadataError('has no IDPSSODescriptor');
  if (descriptors.length > 1) throw new MetadataError('has more than one IDPSSODescriptor');
  const idp = descriptors[0]!;
  const parent = idp.parentNode;
  if (parent?.nodeType !== 1) throw new MetadataError('IDPSSODescriptor is not inside an EntityDescriptor');
  const entity = parent as Element;
  if (entity.localName !== 'EntityDescriptor' || entity.namespaceURI !== NS.metadata)
    throw new MetadataError('IDPSSODescriptor is not inside an EntityDescriptor');
  const entityId = entity.getAttribute('entityID')?.trim();
  if (!entityId) throw new MetadataError('EntityDescriptor has no entityID');

  const signingCerts: string[] = [];
  for (const kd of childElements(idp, NS.metadata, 'KeyDescriptor')) {
    const use = kd.getAttribute('use');
    if (use && use !== 'signing') continue;
    for (const c of descendantElements(kd, NS.dsig, 'X509Certificate')) {
      const body = certificateBody(fullText(c).text);
      if (body && !signingCerts.includes(body)) signingCerts.push(body);
    }
  }
  if (signingCerts.length === 0) throw new MetadataError('has no signing certificate');

  const redirect = childElements(idp, NS.metadata, 'SingleSignOnService').find(
    (s) => s.getAttribute('Binding') === REDIRECT_BINDING,
  );
  const ssoRedirectUrl = redirect?.getAttribute('Location')?.trim();
  if (!ssoRedirectUrl) throw new MetadataError('has no HTTP-Redirect SingleSignOnService');
  return { entityId, ssoRedirectUrl, signingCerts };
}
