// Single sign-on routes (spec document 2, "Single sign-on"), mounted by api/routes/index.ts:
// providers (providers.ts), login start and OAuth2/OIDC callback (login.ts), the SSO session and
// linked identities (session.ts), and SAML's SP metadata and ACS (saml.ts).
import { Router } from 'express';
import type { AppDeps } from '../../../services/deps.ts';
import { ssoLoginRouter } from './login.ts';
import { ssoProvidersRouter } from './providers.ts';
import { samlRouter } from './saml.ts';
import { ssoSessionRouter } from './session.ts';

export function ssoRouter(deps: AppDeps): Router {
  const r = Router();
  r.use(ssoProvidersRouter(deps));
  r.use(ssoLoginRouter(deps));
  r.use(ssoSessionRouter(deps));
  r.use(samlRouter(deps));
  return r;
}
