// SAML endpoints of spec document 2, "Single sign-on":
//   GET  /api/sso/providers/<name>/metadata  the SP metadata XML (entity id, ACS with HTTP-POST binding,
//                                            NameID formats, WantAssertionsSigned); public, like any
//                                            SP metadata; 404 for an unknown, disabled or non-SAML one.
//   POST /api/sso/acs/<name>                 the HTTP-POST ACS: form-urlencoded SAMLResponse +
//                                            RelayState (parsed here, 512 KiB cap), verified by
//                                            services/sso/saml/acs.ts, then the normal SSO sign-in
//                                            (services/sso/sign-in.ts) and a 303 to the bound return_to.
// Every SAML refusal writes SSO_SAML_REFUSED with the precise reason (server side only) and answers
// 401 {error: "SAML login failed"}: nothing in the answer helps an attacker tell which check failed.
// Starting a login (GET /api/sso/login/<name>) lives in api/routes/sso/login.ts.
import express, { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { NotFoundError, UnauthorizedError } from '../../../domain/errors.ts';
import { DEFAULT_RETURN_TO, safeReturnTo } from '../../../domain/sso/return-to.ts';
import { samlConfigOf } from '../../../domain/sso/saml-config.ts';
import { SamlRefusal } from '../../../domain/sso/saml-response.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { loadActiveProvider, type SsoProvider, UNKNOWN_PROVIDER } from '../../../services/sso/providers.ts';
import { consumeSamlResponse } from '../../../services/sso/saml/acs.ts';
import { serviceProviderOf } from '../../../services/sso/saml/entities.ts';
import { signInExternalIdentity } from '../../../services/sso/sign-in.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { browserBound, clearBrowserBinding } from './browser-binding.ts';
import { ssoBrowserRefusal } from './browser-refusal.ts';

export const SSO_SAML_REFUSED = 'SSO_SAML_REFUSED';
export const SAML_LOGIN_FAILED = 'SAML login failed';
const ACS_BODY_LIMIT = '512kb';

export async function auditSamlRefusal(deps: AppDeps, req: Request, provider: string, reason: string) {
  await writeAudit(deps, req, {
    action: SSO_SAML_REFUSED,
    resourceType: 'sso_provider',
    resourceId: provider.slice(0, 100),
    success: false,
    severity: 'warning',
    userId: null,
    tenantId: null,
    username: null,
    details: { provider: provider.slice(0, 100), reason: reason.slice(0, 200) },
  });
}

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getSsoProvidersNameMetadata = endpoint({
  tags: ['sso'],
  summary: 'SAML service provider metadata',
  auth: 'public',
  responses: { 200: 'SP metadata XML (application/samlmetadata+xml)' },
});
// The form fields are read as sent (services/sso/saml/acs.ts verifies them): a missing or malformed
// SAMLResponse is an audited 401 like any other SAML refusal, so the schema accepts any value.
const postSsoAcs = endpoint({
  tags: ['sso'],
  summary: 'SAML assertion consumer service (HTTP-POST binding)',
  description:
    'The identity provider posts the form through the browser. Success: 303 to the return_to bound at login, ' +
    'with the session cookie set. Every SAML refusal answers 401 {"error": "SAML login failed"}.',
  auth: 'public',
  params: z.object({ provider_name: z.string() }),
  body: z.object({
    SAMLResponse: z
      .unknown()
      .optional()
      .meta({ type: 'string', description: 'The base64 SAML response (without it: the 401 refusal)' }),
    RelayState: z.unknown().optional().meta({ type: 'string', description: 'The RelayState of the login' }),
  }),
  bodyMediaTypes: ['application/x-www-form-urlencoded'],
  responses: { 303: 'Signed in: redirect to the return_to' },
  errors: [401, 403, 413],
});

export function samlRouter(deps: AppDeps): Router {
  const r = Router();

  const samlProvider = async (name: string): Promise<SsoProvider> => {
    const provider = await loadActiveProvider(deps, name);
    if (provider.providerType !== 'saml') throw new NotFoundError(UNKNOWN_PROVIDER);
    return provider;
  };

  r.get(
    '/api/sso/providers/:provider_name/metadata',
    getSsoProvidersNameMetadata,
    async (req: Request, res: Response) => {
      const provider = await samlProvider(String(req.params.provider_name));
      const xml = serviceProviderOf(samlConfigOf(provider.config)).getMetadata();
      res.setHeader('content-type', 'application/samlmetadata+xml; charset=utf-8');
      res.setHeader('cache-control', 'no-store');
      res.status(200).send(xml);
    },
  );

  r.post(
    '/api/sso/acs/:provider_name',
    postSsoAcs,
    // inflate: false: nothing is decompressed before the assertion is checked (api/middleware/body.ts).
    express.urlencoded({ extended: false, limit: ACS_BODY_LIMIT, parameterLimit: 10, inflate: false }),
    async (req: Request, res: Response) => {
      res.setHeader('cache-control', 'no-store');
      res.setHeader('referrer-policy', 'no-referrer');
      const name = String(req.params.provider_name);
      let provider: SsoProvider;
      try {
        provider = await samlProvider(name);
      } catch (err) {
        await auditSamlRefusal(
          deps,
          req,
          name,
          (err as { status?: number }).status === 403 ? 'sso_disabled_for_tenant' : 'unknown_provider',
        );
        throw err;
      }
      const body = postSsoAcs.body(req);
      let outcome: Awaited<ReturnType<typeof consumeSamlResponse>>;
      try {
        outcome = await consumeSamlResponse(deps, provider, {
          samlResponse: body.SAMLResponse,
          relayState: body.RelayState,
          browserBound: (relayState) => browserBound(req, relayState),
        });
      } catch (err) {
        if (err instanceof SamlRefusal) {
          await auditSamlRefusal(deps, req, name, err.reason);
          throw new UnauthorizedError(SAML_LOGIN_FAILED);
        }
        req.log?.error({ err: { message: (err as Error)?.message } }, 'SAML ACS failed');
        await auditSamlRefusal(deps, req, name, 'internal_error');
        throw new UnauthorizedError(SAML_LOGIN_FAILED);
      }
      clearBrowserBinding(req, res, provider.name, 'saml');
      const { identity } = outcome;
      await signInExternalIdentity(deps, req, res, {
        provider,
        subject: identity.nameId,
        email: identity.email,
        emailVerified: true,
        username: identity.username ?? null,
        displayName: identity.displayName ?? null,
      });
      res.redirect(303, safeReturnTo(outcome.returnTo) ?? DEFAULT_RETURN_TO);
    },
  );

  // A person's browser sees a refusal on the login page, not as raw JSON (browser-refusal.ts).
  r.use('/api/sso/acs', ssoBrowserRefusal);

  return r;
}
