// Our own verification of the XML signature(s) of a response, run BEFORE samlify: with xml-crypto,
// each ds:Signature (checkStructure has already pinned where they may be and what they reference)
// against the configured IdP certificate(s), never against a certificate the document brings along.
// Two reasons: a forged or unsigned response is refused in about a millisecond instead of after
// samlify's XML schema validation (node-xmllint: ~100-200 ms of CPU per call, on an unauthenticated
// endpoint); and the signature decision does not rest on one library alone (samlify verifies again).
import type { Document, Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { certificateBody, certificatePem } from '../../../domain/sso/saml-config.ts';
import { SamlRefusal } from '../../../domain/sso/saml-response.ts';
import { descendantElements, fullText, NS } from '../../../domain/sso/saml-xml.ts';

/** Refuses unless at least one signature verifies against a configured certificate. */
export function verifySignatureWithConfiguredCerts(xml: string, doc: Document, certBodies: string[]): void {
  const signatures = descendantElements(doc, NS.dsig, 'Signature');
  if (signatures.length === 0) throw new SamlRefusal('unsigned');
  let untrustedKeyInfo = false;
  for (const sigEl of signatures) {
    // A certificate in KeyInfo that is not one of ours: the signer is somebody else.
    const carried = descendantElements(sigEl, NS.dsig, 'X509Certificate').map((c) =>
      certificateBody(fullText(c).text),
    );
    if (carried.length > 0 && !carried.every((c) => certBodies.includes(c))) {
      untrustedKeyInfo = true;
      continue;
    }
    for (const cert of certBodies) {
      if (verifies(xml, sigEl, certificatePem(cert))) return;
    }
  }
  throw new SamlRefusal(untrustedKeyInfo ? 'signature_untrusted_certificate' : 'signature_invalid');
}

function verifies(xml: string, sigEl: Element, certPem: string): boolean {
  try {
    const sig = new SignedXml({ publicCert: certPem, getCertFromKeyInfo: () => null });
    sig.loadSignature(sigEl as unknown as Node);
    return sig.checkSignature(xml) === true;
  } catch {
    return false;
  }
}
