// Access decisions, pure: who is a system administrator, who is an administrator at all, what a set
// of permissions allows, ownership, and which endpoints stay open while a password change is pending.
// Every router asks these functions (through api/middleware/auth.ts); none re-implements them.
import { LEGACY_ADMIN_ROLE, type Permission, ROLE_TEMPLATES, type Role } from './permissions.ts';

/** The part of a user that access decisions look at. */
export interface AccessSubject {
  id: number;
  role: Role | string;
  tenantId: number | null;
}

/** platform_admin or the legacy `admin` role: global authority and visibility. */
export const isSystemAdmin = (user: Pick<AccessSubject, 'role'>): boolean =>
  user.role === 'platform_admin' || user.role === LEGACY_ADMIN_ROLE;

/**
 * An administrator: a system admin, a tenant_admin, or anyone holding `admin_access` (which passes
 * every check). Only system admins are global; the others act inside their own tenant.
 */
export const isAdministrator = (
  user: Pick<AccessSubject, 'role'>,
  permissions: ReadonlySet<string>,
): boolean => isSystemAdmin(user) || user.role === 'tenant_admin' || permissions.has('admin_access');

/** `admin_access` passes every permission check (spec, Roles and permissions). */
export const hasPermission = (permissions: ReadonlySet<string>, p: Permission): boolean =>
  permissions.has('admin_access') || permissions.has(p);

/** The role's template merged with the user's extra grants; unknown names are dropped. */
export function effectivePermissions(
  role: string,
  extras: Iterable<string>,
  templates: ReadonlyMap<string, readonly string[]> = DEFAULT_TEMPLATE_MAP,
): Set<Permission> {
  const out = new Set<Permission>((templates.get(role) ?? []) as Permission[]);
  for (const p of extras) if (KNOWN_PERMISSIONS.has(p)) out.add(p as Permission);
  return out;
}

const DEFAULT_TEMPLATE_MAP: ReadonlyMap<string, readonly string[]> = new Map(Object.entries(ROLE_TEMPLATES));
const KNOWN_PERMISSIONS = new Set<string>(ROLE_TEMPLATES.admin);

/**
 * Ownership (spec: session ownership requires the owner; the admin role bypasses ownership checks).
 * A tenant admin bypasses only inside its own tenant: pass the resource's tenant when it has one.
 */
export function canAccessOwned(
  user: AccessSubject,
  ownerId: number | null | undefined,
  resourceTenantId?: number | null,
): boolean {
  if (isSystemAdmin(user)) return true;
  if (ownerId != null && ownerId === user.id) return true;
  if (user.role === 'tenant_admin' && user.tenantId != null && resourceTenantId != null)
    return resourceTenantId === user.tenantId;
  return false;
}

/** Machine ownership: a machine-admin assignment, or a system admin. */
export const canAdministerMachine = (
  user: AccessSubject,
  assignment: 'user' | 'admin' | null | undefined,
): boolean => isSystemAdmin(user) || assignment === 'admin';

/** Roles an administrator may hand out: system admins any; tenant admins never a global role. */
export function canAssignRole(actor: AccessSubject, role: Role): boolean {
  if (isSystemAdmin(actor)) return true;
  return !isSystemAdmin({ role });
}

/** The endpoints a user with `must_change_password` may still call (spec, Authentication rule 4). */
export const PASSWORD_CHANGE_ALLOWLIST: readonly { method: string; path: string }[] = [
  { method: 'GET', path: '/api/auth/check' },
  { method: 'GET', path: '/api/auth/me' },
  { method: 'GET', path: '/api/auth/profile' },
  { method: 'POST', path: '/api/auth/change-password' },
  { method: 'POST', path: '/api/auth/logout' },
  { method: 'GET', path: '/api/password-policy' },
];

export function allowedWhilePasswordChangeRequired(method: string, path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const m = method === 'HEAD' ? 'GET' : method;
  return PASSWORD_CHANGE_ALLOWLIST.some((e) => e.method === m && e.path === p);
}

/**
 * Whether an administrator may manage (edit, delete, reset, set quota of) a user: a system admin any
 * user; any other administrator only non-system-admin users of its own tenant. Returns the reason
 * when not.
 */
export function userManagementRefusal(
  actor: AccessSubject,
  target: { role: string; tenantId: number | null },
): string | null {
  if (isSystemAdmin(actor)) return null;
  if (actor.tenantId == null || target.tenantId !== actor.tenantId) return 'Cross-tenant access denied';
  if (isSystemAdmin(target)) return 'Only a system administrator can manage a system administrator';
  return null;
}
