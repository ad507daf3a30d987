// The SAML Assertion Consumer Service: one posted SAMLResponse (+ RelayState) in, a verified identity
// out, or a SamlRefusal with the precise reason (the route audits it as SSO_SAML_REFUSED and answers
// the generic "SAML login failed"). Nothing is provisioned or linked before every check has passed.
//
// Order, and who checks what (cheap checks first: the endpoint is unauthenticated, and samlify's
// schema validation costs ~100-200 ms of CPU per call):
//   1. size and base64; the decoded XML is refused if it declares a DTD or entity (before ANY parser),
//      then parsed strictly (domain/sso/saml-xml.ts);
//   2. structure: one assertion, signatures only where they must be, references = parent ids, unique
//      ids (domain/sso/saml-response.ts `checkStructure`): no wrapping; then a signature verified by
//      xml-crypto against the configured certificate(s) (signature.ts);
//   3. our protocol checks (`checkAssertion`), on our clock: status, issuer, Destination, Conditions
//      window and audience, a bearer confirmation with Recipient and window (2 min skew), NameID
//      without comments, the mapped attributes with email required; then the replay pre-check;
//   4. samlify 2.13 `parseLoginResponse` as a second opinion: XML schema (xmllint), status, the
//      signature again (a KeyInfo certificate that is not ours is refused), issuer, Conditions window;
//   0. (after the cheap field checks) the RelayState equals the binding cookie of the browser that
//      started the login (api/routes/sso/browser-binding.ts: login CSRF);
//   5. the RelayState consumed (single use, bound request id); 6. InResponseTo of Response and
//      confirmation = that request id; 7. the assertion id recorded (insert-or-refuse: of concurrent
//      posts of one assertion, one wins).
import { SAML_RESPONSE_MAX_BYTES, samlConfigOf } from '../../../domain/sso/saml-config.ts';
import {
  type CheckedAssertion,
  checkAssertion,
  checkInResponseTo,
  checkStructure,
  SamlRefusal,
} from '../../../domain/sso/saml-response.ts';
import { declaresDoctypeOrEntity, parseUntrustedXml } from '../../../domain/sso/saml-xml.ts';
import type { LoginStateDeps } from '../login-state.ts';
import { consumeLoginState, LoginStateError } from '../login-state.ts';
import { assertionSeen, type ReplayDeps, recordAssertion } from './consumed-assertions.ts';
import { identityProviderOf, serviceProviderOf } from './entities.ts';
import type { SamlProviderRef } from './login.ts';
import { verifySignatureWithConfiguredCerts } from './signature.ts';

export type AcsDeps = LoginStateDeps & ReplayDeps;

export interface AcsOutcome {
  identity: CheckedAssertion;
  returnTo: string | null;
}

/** Checked after whitespace is removed: character class then padding, no overlap (linear). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** samlify's error codes -> our reasons. */
function samlifyReason(err: unknown): string {
  const msg = typeof err === 'string' ? err : err instanceof Error ? err.message : String(err);
  if (msg.includes('ERR_EXCEPTION_VALIDATE_XML') || msg.includes('ERR_INVALID_XML')) return 'schema_invalid';
  if (msg.includes('FAILED_TO_VERIFY_SIGNATURE') || /invalid signature/i.test(msg))
    return 'signature_invalid';
  if (msg.includes('ERROR_UNMATCH_CERTIFICATE_DECLARATION_IN_METADATA'))
    return 'signature_untrusted_certificate';
  if (msg.includes('ERR_POTENTIAL_WRAPPING_ATTACK')) return 'wrapping_in_subject_confirmation';
  if (msg.includes('ERR_FAILED_STATUS') || msg.includes('ERR_UNDEFINED_STATUS')) return 'status_not_success';
  if (msg.includes('ERR_UNMATCH_ISSUER')) return 'issuer_mismatch';
  if (msg.includes('ERR_SUBJECT_UNCONFIRMED')) return 'assertion_time_window';
  if (msg.includes('ERR_EXPIRED_SESSION')) return 'session_expired';
  if (msg.includes('NO_SIGNATURE_REFERENCES')) return 'signature_invalid';
  // Only a bare error code is kept: a free-text message may quote parts of the document.
  const code = msg.slice(0, 80);
  return /^[A-Z][A-Z0-9_]*$/.test(code) ? `samlify_${code}` : 'samlify_rejected';
}

export async function consumeSamlResponse(
  deps: AcsDeps,
  provider: SamlProviderRef,
  input: { samlResponse: unknown; relayState: unknown; browserBound: (relayState: string) => boolean },
): Promise<AcsOutcome> {
  const cfg = samlConfigOf(provider.config);
  const encoded = input.samlResponse;
  if (typeof encoded !== 'string' || encoded.length === 0) throw new SamlRefusal('saml_response_missing');
  if (encoded.length > SAML_RESPONSE_MAX_BYTES) throw new SamlRefusal('saml_response_too_large');
  const compact = encoded.replace(/\s+/g, '');
  if (!BASE64.test(compact)) throw new SamlRefusal('saml_response_not_base64');
  if (typeof input.relayState !== 'string' || input.relayState.length === 0)
    throw new SamlRefusal('relay_state_missing');
  // 0. The browser posting is the one that started this login (its binding cookie holds the RelayState):
  //    a response the attacker obtained for their own login cannot be posted through a victim's browser.
  if (!input.browserBound(input.relayState)) throw new SamlRefusal('browser_binding_mismatch');
  const xml = Buffer.from(compact, 'base64').toString('utf8');

  // 1. DTD / entities before any parser, then a strict parse.
  if (declaresDoctypeOrEntity(xml)) throw new SamlRefusal('dtd_or_entity_declared');
  let doc: ReturnType<typeof parseUntrustedXml>;
  try {
    doc = parseUntrustedXml(xml);
  } catch {
    throw new SamlRefusal('xml_malformed');
  }
  // 2. Structure, then our own signature check against the configured certificate(s).
  const parts = checkStructure(doc);
  verifySignatureWithConfiguredCerts(xml, doc, cfg.idp_signing_certs);

  // 3. Our protocol checks, then the replay pre-check: all cheap, so an expired, misdirected or
  //    replayed response (even a genuinely signed one) never reaches the costly schema validation.
  const identity = checkAssertion(parts, cfg, deps.now());
  if (await assertionSeen(deps, provider.name, identity.assertionId))
    throw new SamlRefusal('assertion_replayed');

  // 4. samlify as the second opinion: XML schema, status, signature, issuer, Conditions window.
  const sp = serviceProviderOf(cfg);
  const idp = identityProviderOf(cfg);
  try {
    await sp.parseLoginResponse(idp, 'post', { body: { SAMLResponse: compact } });
  } catch (err) {
    throw new SamlRefusal(samlifyReason(err));
  }

  // 5. RelayState (single use) -> the bound request id.
  let state: Awaited<ReturnType<typeof consumeLoginState>>;
  try {
    state = await consumeLoginState(deps, provider.name, input.relayState);
  } catch (err) {
    if (err instanceof LoginStateError) throw new SamlRefusal(`relay_${err.reason}`);
    throw err;
  }
  if (state.kind !== 'saml') throw new SamlRefusal('relay_state_not_saml');

  // 6. InResponseTo.
  checkInResponseTo(identity, state.samlRequestId);

  // 7. Record the assertion id (insert-or-refuse).
  if (!(await recordAssertion(deps, provider.name, identity.assertionId, identity.expiresAt)))
    throw new SamlRefusal('assertion_replayed');

  return { identity, returnTo: state.returnTo };
}
