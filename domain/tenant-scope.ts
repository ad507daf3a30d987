// Tenant scope decisions, pure. Two questions are answered here and nowhere else:
//   1. which tenants' rows may a caller read (`readScope`, spec document 2 rule 5: system administrators
//      keep global visibility, everyone else sees their own tenant, a user without a tenant sees nothing);
//   2. which tenant does a tenant-scoped API-key call act on (`resolveKeyTenant`, the rules table of
//      document 1, "Tenant-scoped API key endpoints"), failing closed.
import { isAdministrator, isSystemAdmin } from './access.ts';
import { BadRequestError, ForbiddenError } from './errors.ts';

export type ReadScope = { kind: 'all' } | { kind: 'tenant'; tenantId: number } | { kind: 'none' };

export function readScope(user: { role: string; tenantId: number | null }): ReadScope {
  if (isSystemAdmin(user)) return { kind: 'all' };
  if (user.tenantId == null) return { kind: 'none' };
  return { kind: 'tenant', tenantId: user.tenantId };
}

/** Whether a row of `tenantId` is inside the scope. */
export function inScope(scope: ReadScope, tenantId: number | null | undefined): boolean {
  if (scope.kind === 'all') return true;
  if (scope.kind === 'none') return false;
  return tenantId != null && tenantId === scope.tenantId;
}

// The exact texts of the spec's error table.
export const TENANT_KEY_ERRORS = {
  targetRequired: 'Target tenant_id is required',
  invalid: 'Invalid tenant_id',
  crossTenant: 'Cross-tenant access denied',
  adminWithoutTenant: 'Tenant admin must have tenant_id',
  keyNotFound: 'API key not found or access denied',
} as const;

const MAX_ID = 2_147_483_647;

/**
 * Reads a tenant_id parameter. `undefined` means "not given" (absent, or JSON null). Anything given
 * that is not a positive integer in range is malformed: never ignored, never defaulted.
 */
export function parseTenantIdParam(raw: unknown): number | undefined | 'invalid' {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'number') return Number.isInteger(raw) && raw >= 1 && raw <= MAX_ID ? raw : 'invalid';
  if (typeof raw !== 'string' || !/^[0-9]{1,10}$/.test(raw)) return 'invalid';
  const n = Number(raw);
  return n >= 1 && n <= MAX_ID ? n : 'invalid';
}

export interface KeyTenantDecision {
  tenantId: number;
  /** The caller acts on a tenant other than its own (audit record required). */
  crossTenant: boolean;
}

/**
 * The tenant rules table. `raw` is the tenant_id the caller supplied (query or body), unparsed; it
 * only selects a target and never grants authority. Callers that are neither kind of administrator
 * must have been refused before (403 by the guard); they are refused here too.
 */
export function resolveKeyTenant(
  user: { role: string; tenantId: number | null },
  permissions: ReadonlySet<string>,
  raw: unknown,
): KeyTenantDecision {
  const given = parseTenantIdParam(raw);
  if (isSystemAdmin(user)) {
    if (given === undefined) throw new BadRequestError(TENANT_KEY_ERRORS.targetRequired);
    if (given === 'invalid') throw new BadRequestError(TENANT_KEY_ERRORS.invalid);
    return { tenantId: given, crossTenant: given !== user.tenantId };
  }
  // A tenant admin (or a holder of admin_access, which acts like one inside its tenant).
  if (isAdministrator(user, permissions)) {
    if (user.tenantId == null) throw new ForbiddenError(TENANT_KEY_ERRORS.adminWithoutTenant);
    if (given === undefined) return { tenantId: user.tenantId, crossTenant: false };
    if (given === 'invalid') throw new BadRequestError(TENANT_KEY_ERRORS.invalid);
    if (given !== user.tenantId) throw new ForbiddenError(TENANT_KEY_ERRORS.crossTenant);
    return { tenantId: given, crossTenant: false };
  }
  throw new ForbiddenError('Admin access required');
}
