// The rules shared by a user's personal credentials (upload tokens: upload-tokens.ts; gateway keys:
// gateway-keys.ts): who may list and revoke one, and how a revocation the caller may not make is
// answered (404, as a missing one: its existence is not disclosed) and audited.
import type { Request } from 'express';
import { isAdministrator, isSystemAdmin } from '../../domain/access.ts';
import { ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';

/** The owner, an administrator of the credential's tenant, or a system administrator. */
export function mayManageCredential(req: Request, c: { userId: number; tenantId: number | null }): boolean {
  const { user, permissions } = req.auth;
  if (c.userId === user.id || isSystemAdmin(user)) return true;
  return isAdministrator(user, permissions) && user.tenantId !== null && c.tenantId === user.tenantId;
}

/**
 * Whose credentials a listing shows: the caller's own; `scope=tenant` a tenant administrator's tenant,
 * a system administrator's every tenant (or `tenant_id`); anyone else 403.
 */
export function credentialListFilter(
  req: Request,
  q: { scope: 'own' | 'tenant'; tenant_id?: number },
  noun: string,
): { userId?: number; tenantId?: number } {
  const { user, permissions } = req.auth;
  if (q.scope !== 'tenant') return { userId: user.id };
  if (isSystemAdmin(user)) return q.tenant_id !== undefined ? { tenantId: q.tenant_id } : {};
  if (isAdministrator(user, permissions) && user.tenantId !== null) return { tenantId: user.tenantId };
  throw new ForbiddenError(`Admin access required to list the tenant's ${noun}`);
}

/** Audits a refused revocation (bounded per caller) and throws the 404. */
export async function refuseCredentialRevoke(
  deps: AppDeps,
  req: Request,
  r: { action: string; resourceType: string; id: number; found: boolean; notFound: string },
): Promise<never> {
  await writeAudit(deps, req, {
    action: r.action,
    resourceType: r.resourceType,
    resourceId: r.id,
    success: false,
    severity: 'warning',
    details: { reason: r.found ? 'not_allowed' : 'not_found' },
    rateLimitKey: `${req.auth.user.id}:revoke`,
  });
  throw new NotFoundError(r.notFound);
}
