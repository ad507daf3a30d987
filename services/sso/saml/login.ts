// Starting a SAML login (B's GET /api/sso/login/<name> calls this for a `saml` provider): a fresh
// AuthnRequest id, a login state bound to it (RelayState, single use, 10 minutes: services/sso/
// login-state.ts), and the HTTP-Redirect binding URL to the IdP carrying both. The ACS later accepts
// only a response whose InResponseTo is the id bound to the RelayState it comes back with.
import { randomBytes } from 'node:crypto';
import { samlConfigOf } from '../../../domain/sso/saml-config.ts';
import { createLoginState, type LoginStateDeps } from '../login-state.ts';
import { identityProviderOf, serviceProviderOf } from './entities.ts';

/** What login needs of a provider (B's SsoProvider satisfies it). */
export interface SamlProviderRef {
  name: string;
  config: Record<string, unknown>;
}

/** SAML IDs are xs:ID (an NCName): must not start with a digit. 160 random bits. */
export const newSamlRequestId = (): string => `_${randomBytes(20).toString('hex')}`;

export async function startSamlLogin(
  deps: LoginStateDeps,
  provider: SamlProviderRef,
  opts: { returnTo?: string } = {},
): Promise<{ location: string; relayState: string }> {
  const cfg = samlConfigOf(provider.config);
  const requestId = newSamlRequestId();
  const relayState = await createLoginState(deps, {
    providerName: provider.name,
    kind: 'saml',
    samlRequestId: requestId,
    ...(opts.returnTo ? { returnTo: opts.returnTo } : {}),
  });
  const sp = serviceProviderOf(cfg, { requestId });
  const { id, context } = sp.createLoginRequest(identityProviderOf(cfg), 'redirect', { relayState });
  if (id !== requestId) throw new Error('samlify did not use the generated AuthnRequest id');
  // The RelayState goes back to the route too: it binds the login to this browser (browser-binding.ts).
  return { location: context, relayState };
}
