// GET /api/sso/login/<provider_name> (starts a login: 302 to the identity provider) and
// GET /api/sso/callback/<provider_name> (OAuth2/OIDC callback: 302 to the safe return_to after sign-in).
//
// The callback must come from the browser that started the login (browser-binding.ts: login CSRF).
// `return_to` must be a same-origin relative path (domain/sso/return-to.ts); anything else is refused
// with 400 before the provider is contacted. Every refusal (unknown or disabled provider, tenant with
// SSO off, unsafe return_to, bad state, failed token exchange or ID-token validation, user or tenant
// refused) writes SSO_LOGIN_REFUSED with its reason and answers a generic error. SAML providers start
// through services/sso/saml/login.ts; their ACS is mounted by api/routes/sso/saml.ts.
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { AppError } from '../../../domain/errors.ts';
import { BadRequestError, NotFoundError } from '../../../domain/errors.ts';
import { DEFAULT_RETURN_TO, safeReturnTo } from '../../../domain/sso/return-to.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { auditSsoRefusal } from '../../../services/sso/audit.ts';
import { LoginStateError } from '../../../services/sso/login-state.ts';
import { completeOAuthLogin, OAuthLoginRefusal, startOAuthLogin } from '../../../services/sso/oauth-login.ts';
import { loadActiveProvider, type SsoProvider, UNKNOWN_PROVIDER } from '../../../services/sso/providers.ts';
import { startSamlLogin } from '../../../services/sso/saml/login.ts';
import { signInExternalIdentity } from '../../../services/sso/sign-in.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { browserBound, clearBrowserBinding, setBrowserBinding } from './browser-binding.ts';
import { ssoBrowserRefusal } from './browser-refusal.ts';

export const UNSAFE_RETURN_TO = 'return_to must be a relative path on this site';

const noStore = (res: Response) => {
  res.setHeader('cache-control', 'no-store');
  res.setHeader('referrer-policy', 'no-referrer');
};

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getSsoCallbackName = endpoint({
  tags: ['sso'],
  summary: 'OAuth2/OIDC callback (from the browser that started the login)',
  description:
    'Signs in and redirects to the bound return_to; refusals are audited. A browser sees refusals on the login page.',
  auth: 'public',
  responses: { 302: 'Signed in (session cookie set): redirect to the return_to' },
  errors: [400, 401, 403, 503],
});
// `return_to` is read as sent: an unsafe value is an audited 400 with UNSAFE_RETURN_TO.
const getSsoLogin = endpoint({
  tags: ['sso'],
  summary: 'Start a single sign-on login',
  description:
    'Redirects the browser to the identity provider (OAuth2/OIDC authorization or SAML HTTP-Redirect). ' +
    'A browser (Accept: text/html) sees refusals on the login page instead of JSON.',
  auth: 'public',
  params: z.object({ provider_name: z.string() }),
  query: z.object({
    return_to: z
      .unknown()
      .optional()
      .meta({ type: 'string', description: 'A relative path on this site to return to after sign-in' }),
  }),
  responses: { 302: 'Redirect to the identity provider' },
  errors: [403, 404, 503],
});

export function ssoLoginRouter(deps: AppDeps): Router {
  const r = Router();

  /** The provider, or an audited refusal (404 unknown/disabled, 403 tenant SSO off). */
  const providerFor = async (req: Request, name: string): Promise<SsoProvider> => {
    try {
      return await loadActiveProvider(deps, name);
    } catch (err) {
      const status = (err as AppError).status;
      await auditSsoRefusal(deps, req, name, status === 403 ? 'sso_disabled_for_tenant' : 'unknown_provider');
      throw err;
    }
  };

  r.get('/api/sso/login/:provider_name', getSsoLogin, async (req, res) => {
    noStore(res);
    const name = String(req.params.provider_name);
    const raw = getSsoLogin.query(req).return_to;
    let returnTo = DEFAULT_RETURN_TO;
    if (raw !== undefined) {
      const safe = safeReturnTo(raw);
      if (!safe) {
        await auditSsoRefusal(deps, req, name, 'unsafe_return_to');
        throw new BadRequestError(UNSAFE_RETURN_TO);
      }
      returnTo = safe;
    }
    const provider = await providerFor(req, name);
    let location: string;
    try {
      if (provider.providerType === 'saml') {
        const started = await startSamlLogin(deps, provider, { returnTo });
        setBrowserBinding(req, res, provider.name, started.relayState, 'saml');
        location = started.location;
      } else {
        const started = await startOAuthLogin(deps, provider, returnTo);
        setBrowserBinding(req, res, provider.name, started.state);
        location = started.url;
      }
    } catch (err) {
      if (err instanceof OAuthLoginRefusal) await auditSsoRefusal(deps, req, name, err.reason);
      throw err;
    }
    res.redirect(302, location);
  });

  r.get('/api/sso/callback/:provider_name', getSsoCallbackName, async (req, res) => {
    noStore(res);
    const name = String(req.params.provider_name);
    const provider = await providerFor(req, name);
    if (provider.providerType === 'saml') {
      await auditSsoRefusal(deps, req, name, 'callback_for_saml_provider');
      throw new NotFoundError(UNKNOWN_PROVIDER);
    }
    let outcome: Awaited<ReturnType<typeof completeOAuthLogin>>;
    try {
      outcome = await completeOAuthLogin(deps, req, provider, {
        browserBound: (state) => browserBound(req, state),
      });
    } catch (err) {
      if (err instanceof LoginStateError || err instanceof OAuthLoginRefusal)
        await auditSsoRefusal(deps, req, name, err.reason);
      throw err;
    }
    clearBrowserBinding(req, res, provider.name);
    await signInExternalIdentity(deps, req, res, outcome.identity);
    res.redirect(302, safeReturnTo(outcome.state.returnTo) ?? DEFAULT_RETURN_TO);
  });

  // A person's browser sees a refusal on the login page, not as raw JSON (browser-refusal.ts).
  r.use(['/api/sso/login', '/api/sso/callback'], ssoBrowserRefusal);

  return r;
}
