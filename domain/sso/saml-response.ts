// The checks of a SAML Response that samlify does not make (or makes only loosely), as pure functions
// over the parsed document, each refusal carrying the precise reason that goes to the audit record
// (never to the client). See services/sso/saml/acs.ts for the order they run in.
//
// Structure first (what defeats XML signature wrapping, whatever samlify's own XPaths do): the root is
// a samlp:Response; the document holds exactly ONE saml:Assertion anywhere, as a direct child of the
// root; no EncryptedAssertion; ds:Signature elements appear only as a direct child of the Response or
// of that Assertion, and each one's single Reference points at the ID of the element it sits in; no two
// elements share an ID. So whichever signature verifies, the element it covers is the Response (which
// contains the one assertion) or the one assertion itself: the assertion read below is the signed one.
//
// Then the protocol checks of spec document 2, Authentication 4: success status; issuer (assertion and
// response) = the IdP entity id; every AudienceRestriction names the SP entity id; Destination = ACS
// URL; a bearer SubjectConfirmation whose Recipient = ACS URL and whose InResponseTo and the
// Response's InResponseTo both equal the request id bound to the RelayState; Conditions and
// SubjectConfirmationData time windows with at most 2 minutes skew; the NameID as its full text (a
// comment inside it is refused, so `user@evil.com<!---->.attacker` never reads as `user@evil.com`);
// the mapped attributes, email required.
import { timingSafeEqual } from 'node:crypto';
import type { Document, Element } from '@xmldom/xmldom';
import { SAML_CLOCK_SKEW_MS, type SamlAttributeMapping, type SamlProviderConfig } from './saml-config.ts';
import { childElements, descendantElements, fullText, NS } from './saml-xml.ts';

export const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
export const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const MAX_NAMEID = 255;
const MAX_ATTRIBUTE = 512;

export class SamlRefusal extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

const refuse = (reason: string): never => {
  throw new SamlRefusal(reason);
};

export function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface SamlResponseParts {
  response: Element;
  assertion: Element;
}

/** The structural (anti-wrapping) checks; returns the Response and its one Assertion. */
export function checkStructure(doc: Document): SamlResponseParts {
  const response = doc.documentElement;
  if (!response || response.namespaceURI !== NS.protocol || response.localName !== 'Response')
    refuse('not_a_response');
  // Counted by local name in ANY namespace: samlify's XPaths match by local-name(), so an
  // `<evil:Assertion>` that we would skip must not exist for it to find either.
  if (descendantElements(doc, '*', 'EncryptedAssertion').length > 0)
    refuse('encrypted_assertion_unsupported');
  const all = descendantElements(doc, '*', 'Assertion');
  if (all.length === 0) refuse('no_assertion');
  if (all.length > 1) refuse('wrapping_multiple_assertions');
  const assertion = all[0]!;
  if (assertion.namespaceURI !== NS.assertion) refuse('assertion_wrong_namespace');
  if (assertion.parentNode !== response) refuse('wrapping_assertion_not_child_of_response');

  // Unique IDs across the whole document (a duplicate ID is how a reference gets redirected).
  // Iterative walk: a deeply nested document cannot exhaust the stack.
  const ids = new Set<string>();
  const stack: Element[] = [response!];
  while (stack.length > 0) {
    const el = stack.pop()!;
    for (const attr of ['ID', 'Id', 'id']) {
      const v = el.getAttribute(attr);
      if (v) {
        if (ids.has(v)) refuse('wrapping_duplicate_id');
        ids.add(v);
      }
    }
    for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) stack.push(n as Element);
  }

  const signatures = descendantElements(doc, '*', 'Signature');
  if (signatures.length === 0) refuse('unsigned');
  if (signatures.length > 2) refuse('wrapping_signature_misplaced');
  for (const sig of signatures) {
    if (sig.namespaceURI !== NS.dsig) refuse('wrapping_signature_misplaced');
    const parent = sig.parentNode as Element | null;
    if (parent !== response && parent !== assertion) refuse('wrapping_signature_misplaced');
    const refs = descendantElements(sig, '*', 'Reference');
    if (refs.length !== 1) refuse('signature_reference_count');
    const uri = refs[0]!.getAttribute('URI') ?? '';
    const parentId = parent!.getAttribute('ID') ?? '';
    if (!parentId || uri !== `#${parentId}`) refuse('wrapping_signature_reference_mismatch');
  }
  if (signatures.filter((s) => s.parentNode === response).length > 1) refuse('wrapping_signature_misplaced');
  if (signatures.filter((s) => s.parentNode === assertion).length > 1) refuse('wrapping_signature_misplaced');
  return { response: response!, assertion };
}

const one = (parent: Element, ns: string, name: string, reason: string): Element => {
  const els = childElements(parent, ns, name);
  if (els.length !== 1) refuse(reason);
  return els[0]!;
};

/** Text of a simple element; refuses comments/child elements inside it. */
const plainText = (el: Element, reason: string): string => {
  const t = fullText(el);
  if (t.hasComment || t.hasElement) refuse(reason);
  return t.text;
};

const instant = (v: string | null, reason: string): number | undefined => {
  if (v === null || v === '') return undefined;
  const t = Date.parse(v);
  if (!Number.isFinite(t)) refuse(reason);
  return t;
};

export interface CheckedAssertion {
  assertionId: string;
  nameId: string;
  email: string;
  username?: string;
  displayName?: string;
  /** When the assertion stops being acceptable (for replay memory). */
  expiresAt: Date;
  /** InResponseTo of the Response and of the bearer confirmation (compared after RelayState). */
  inResponseTo: { response: string | null; confirmation: string | null };
}

/** Every check that does not need the request id; `now` is the service clock. */
export function checkAssertion(
  parts: SamlResponseParts,
  cfg: SamlProviderConfig,
  now: Date,
): CheckedAssertion {
  const { response, assertion } = parts;
  const t = now.getTime();

  // Status.
  const status = one(response, NS.protocol, 'Status', 'status_missing');
  const code = one(status, NS.protocol, 'StatusCode', 'status_missing');
  if (code.getAttribute('Value') !== STATUS_SUCCESS) refuse('status_not_success');

  // Issuer: the assertion's (required) and the response's (optional) = the IdP entity id.
  const aIssuer = plainText(
    one(assertion, NS.assertion, 'Issuer', 'issuer_missing'),
    'issuer_malformed',
  ).trim();
  if (!sameString(aIssuer, cfg.idp_entity_id)) refuse('issuer_mismatch');
  const rIssuers = childElements(response, NS.assertion, 'Issuer');
  if (rIssuers.length > 1) refuse('issuer_malformed');
  if (
    rIssuers.length === 1 &&
    !sameString(plainText(rIssuers[0]!, 'issuer_malformed').trim(), cfg.idp_entity_id)
  )
    refuse('issuer_mismatch');

  // Destination.
  const destination = response.getAttribute('Destination');
  if (!destination) refuse('destination_missing');
  if (!sameString(destination!, cfg.acs_url)) refuse('destination_mismatch');

  // Conditions: time window and audience.
  const conditions = one(assertion, NS.assertion, 'Conditions', 'conditions_missing');
  const notBefore = instant(conditions.getAttribute('NotBefore'), 'conditions_time_malformed');
  const notOnOrAfter = instant(conditions.getAttribute('NotOnOrAfter'), 'conditions_time_malformed');
  if (notBefore !== undefined && t + SAML_CLOCK_SKEW_MS < notBefore) refuse('assertion_not_yet_valid');
  if (notOnOrAfter !== undefined && t - SAML_CLOCK_SKEW_MS >= notOnOrAfter) refuse('assertion_expired');
  const restrictions = childElements(conditions, NS.assertion, 'AudienceRestriction');
  if (restrictions.length === 0) refuse('audience_missing');
  for (const r of restrictions) {
    const audiences = childElements(r, NS.assertion, 'Audience').map((a) =>
      plainText(a, 'audience_malformed').trim(),
    );
    if (!audiences.some((a) => sameString(a, cfg.sp_entity_id))) refuse('audience_mismatch');
  }

  // Subject: NameID and a bearer confirmation for our ACS.
  const subject = one(assertion, NS.assertion, 'Subject', 'subject_missing');
  const nameIdEl = one(subject, NS.assertion, 'NameID', 'nameid_missing');
  const nameText = fullText(nameIdEl);
  if (nameText.hasComment) refuse('nameid_contains_comment');
  if (nameText.hasElement) refuse('nameid_malformed');
  const nameId = nameText.text.trim();
  if (!nameId || nameId.length > MAX_NAMEID) refuse('nameid_malformed');

  const bearers = childElements(subject, NS.assertion, 'SubjectConfirmation').filter(
    (c) => c.getAttribute('Method') === BEARER,
  );
  if (bearers.length !== 1) refuse('subject_confirmation_missing');
  const data = one(bearers[0]!, NS.assertion, 'SubjectConfirmationData', 'subject_confirmation_missing');
  const recipient = data.getAttribute('Recipient');
  if (!recipient) refuse('recipient_missing');
  if (!sameString(recipient!, cfg.acs_url)) refuse('recipient_mismatch');
  const scNotBefore = instant(data.getAttribute('NotBefore'), 'confirmation_time_malformed');
  const scNotOnOrAfter = instant(data.getAttribute('NotOnOrAfter'), 'confirmation_time_malformed');
  if (scNotOnOrAfter === undefined) refuse('confirmation_expiry_missing');
  if (scNotBefore !== undefined && t + SAML_CLOCK_SKEW_MS < scNotBefore) refuse('confirmation_not_yet_valid');
  if (t - SAML_CLOCK_SKEW_MS >= scNotOnOrAfter!) refuse('confirmation_expired');

  // Attributes.
  const attrs = readAttributes(assertion, cfg.attribute_mapping);
  if (!attrs.email) refuse('email_attribute_missing');
  if (attrs.email!.length > 254 || !attrs.email!.includes('@')) refuse('email_attribute_malformed');

  const assertionId = assertion.getAttribute('ID');
  if (!assertionId || assertionId.length > 255) refuse('assertion_id_missing');

  const expiresAt = Math.max(scNotOnOrAfter!, notOnOrAfter ?? 0) + SAML_CLOCK_SKEW_MS;
  return {
    assertionId: assertionId!,
    nameId,
    email: attrs.email!,
    ...(attrs.username ? { username: attrs.username } : {}),
    ...(attrs.name ? { displayName: attrs.name } : {}),
    expiresAt: new Date(expiresAt),
    inResponseTo: {
      response: response.getAttribute('InResponseTo') || null,
      confirmation: data.getAttribute('InResponseTo') || null,
    },
  };
}

/** InResponseTo of both the Response and the bearer confirmation must be the bound request id. */
export function checkInResponseTo(checked: CheckedAssertion, requestId: string | null): void {
  if (!requestId) refuse('state_without_request_id');
  const { response, confirmation } = checked.inResponseTo;
  if (!response || !confirmation) refuse('in_response_to_missing');
  if (!sameString(response!, requestId!) || !sameString(confirmation!, requestId!))
    refuse('in_response_to_mismatch');
}

function readAttributes(assertion: Element, mapping: SamlAttributeMapping) {
  const values = new Map<string, string>();
  for (const stmt of childElements(assertion, NS.assertion, 'AttributeStatement')) {
    for (const a of childElements(stmt, NS.assertion, 'Attribute')) {
      const name = a.getAttribute('Name');
      if (!name || values.has(name)) continue;
      const first = childElements(a, NS.assertion, 'AttributeValue')[0];
      if (!first) continue;
      const text = fullText(first);
      if (text.hasComment || text.hasElement) refuse('attribute_contains_markup');
      const v = text.text.trim();
      if (v && v.length <= MAX_ATTRIBUTE) values.set(name, v);
    }
  }
  return {
    email: values.get(mapping.email),
    username: mapping.username ? values.get(mapping.username) : undefined,
    name: mapping.name ? values.get(mapping.name) : undefined,
  };
}
