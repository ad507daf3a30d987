// Parsing untrusted SAML XML (responses posted to the ACS, IdP metadata) without the classic XML
// attacks. A document type declaration is refused outright, before any parser sees the text: DTDs are
// how external entities (file/URL reads, SSRF) and entity expansion ("billion laughs") get in, and no
// SAML message or metadata document needs one. The parser then stops at the first error or warning, so
// a document it had to repair (and that another parser might read differently) is refused too.
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

export class UnsafeXmlError extends Error {}

/** True when the text declares a DTD or an entity (checked case-insensitively, linear scan). */
export function declaresDoctypeOrEntity(xml: string): boolean {
  const upper = xml.toUpperCase();
  return upper.includes('<!DOCTYPE') || upper.includes('<!ENTITY');
}

/** Parses untrusted XML; throws UnsafeXmlError for a DTD/entity and for any parse error or warning. */
export function parseUntrustedXml(xml: string): Document {
  if (declaresDoctypeOrEntity(xml)) throw new UnsafeXmlError('document type or entity declaration');
  const parser = new DOMParser({
    onError: (level, message) => {
      throw new UnsafeXmlError(`xml ${level}: ${message}`);
    },
  });
  let doc: Document;
  try {
    doc = parser.parseFromString(xml, 'text/xml');
  } catch (err) {
    throw err instanceof UnsafeXmlError ? err : new UnsafeXmlError(`xml parse: ${(err as Error).message}`);
  }
  if (!doc.documentElement) throw new UnsafeXmlError('no document element');
  if (doc.doctype) throw new UnsafeXmlError('document type declaration');
  return doc;
}

/** The element children of `parent` with this namespace and local name (direct children only). */
export function childElements(parent: Node, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1) {
      const el = n as Element;
      if (el.namespaceURI === ns && el.localName === localName) out.push(el);
    }
  }
  return out;
}

/** Every descendant element with this namespace and local name. */
export function descendantElements(parent: Document | Element, ns: string, localName: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(ns, localName));
}

/**
 * The text of an element: its text and CDATA children concatenated. Comments, processing instructions
 * and child elements are reported, not skipped, so a caller can refuse them (the NameID comment
 * injection `user@evil.com<!---->.attacker` must never read as `user@evil.com`, nor as the
 * concatenation a lenient reader would make). Child elements are not descended into.
 */
export function fullText(el: Element): { text: string; hasComment: boolean; hasElement: boolean } {
  let text = '';
  let hasComment = false;
  let hasElement = false;
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 3 || n.nodeType === 4) text += n.nodeValue ?? '';
    else if (n.nodeType === 8 || n.nodeType === 7) hasComment = true;
    else if (n.nodeType === 1) hasElement = true;
  }
  return { text, hasComment, hasElement };
}
