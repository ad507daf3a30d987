import { ssoConsumedAssertions, ssoLoginStates } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Single sign-on login state (issue 12 items 1-3): the OAuth2/OIDC state, nonce and PKCE verifier and
// the SAML RelayState -> AuthnRequest id binding live server-side, single use and short-lived
// (sso_login_states); accepted SAML assertion ids are remembered until their expiry so a replayed
// response is refused (sso_consumed_assertions).
export default defineMigration({
  id: '0021_sso_login_state',
  kind: 'expand',
  description:
    'sso_login_states (state/RelayState, nonce, PKCE verifier), sso_consumed_assertions (SAML replay)',
  creates: [ssoLoginStates, ssoConsumedAssertions],
});
