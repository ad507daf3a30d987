// Audit records of SSO logins, shared by OAuth2/OIDC and SAML so both write the same actions:
// SSO_LOGIN (success; details: provider, created, linked) and SSO_LOGIN_REFUSED (details: provider and
// the precise reason; the client only ever sees a generic error). Never a token, code, assertion or
// secret in details.
import type { Request } from 'express';
import { writeAudit } from '../audit.ts';
import type { AppDeps } from '../deps.ts';

export const SSO_LOGIN = 'SSO_LOGIN';
export const SSO_LOGIN_REFUSED = 'SSO_LOGIN_REFUSED';
export const SSO_LOGOUT = 'SSO_LOGOUT';

export async function auditSsoRefusal(
  deps: AppDeps,
  req: Request,
  providerName: string,
  reason: string,
  extra: { userId?: number | null; tenantId?: number | null; username?: string | null } = {},
): Promise<void> {
  await writeAudit(deps, req, {
    action: SSO_LOGIN_REFUSED,
    resourceType: 'sso_provider',
    resourceId: providerName.slice(0, 100),
    success: false,
    severity: 'warning',
    userId: extra.userId ?? null,
    tenantId: extra.tenantId ?? null,
    username: extra.username ?? null,
    details: { provider: providerName.slice(0, 100), reason: reason.slice(0, 200) },
  });
}
