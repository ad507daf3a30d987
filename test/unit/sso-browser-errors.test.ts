// domain/sso/browser-errors.ts: the code a refused SSO login carries back to the login page, and the
// only words the login page shows for it (a crafted code reads as the generic failure).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { UNSAFE_RETURN_TO } from '../../api/routes/sso/login.ts';
import { SSO_ERROR_WORDS, ssoErrorCode, ssoErrorWords } from '../../domain/sso/browser-errors.ts';
import { INVALID_LOGIN_STATE } from '../../services/sso/login-state.ts';
import { SSO_CALLBACK_REFUSED } from '../../services/sso/oauth-login.ts';
import { SSO_DISABLED_FOR_TENANT, UNKNOWN_PROVIDER } from '../../services/sso/providers.ts';

it('maps each refusal of the SSO routes to its code', () => {
  assert.equal(ssoErrorCode(401, SSO_CALLBACK_REFUSED), 'failed');
  assert.equal(ssoErrorCode(502, SSO_CALLBACK_REFUSED), 'failed');
  assert.equal(ssoErrorCode(400, INVALID_LOGIN_STATE), 'expired');
  assert.equal(ssoErrorCode(400, UNSAFE_RETURN_TO), 'return_to');
  assert.equal(ssoErrorCode(403, SSO_DISABLED_FOR_TENANT), 'disabled');
  assert.equal(ssoErrorCode(404, UNKNOWN_PROVIDER), 'unknown');
});

it('shows only its own sentences: unknown or crafted codes read as the generic failure', () => {
  assert.equal(ssoErrorWords(undefined), null);
  assert.equal(ssoErrorWords(''), null);
  for (const [code, words] of Object.entries(SSO_ERROR_WORDS)) assert.equal(ssoErrorWords(code), words);
  for (const crafted of ['Call 555-0100', '<script>x</script>', 'toString', '__proto__', 'constructor'])
    assert.equal(ssoErrorWords(crafted), SSO_ERROR_WORDS.failed, crafted);
});
