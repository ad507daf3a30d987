// Who may run autonomous workflows (issue 25 item 2). Running one means an AI CLI, the repository's CI
// and its hooks execute on the service's machine on the caller's behalf, so creating, controlling,
// forking and deleting workflows (every non-read route of /api/autonomous) is a privilege of its own:
//   - platform admins (and the legacy `admin`) always may;
//   - `readonly` never may, whatever a tenant configures;
//   - everyone else may when their role is among their tenant's `run_roles` (a tenant admin sets it:
//     PUT /api/tenants/:tenant_id/autonomous; default tenant_admin, manager and user);
//   - a user without a tenant never may (projects are tenant-scoped).
// Reads (list, detail, timeline, stream) are not governed here: they stay owner-or-administrator
// (access.ts). Pure: the caller loads the tenant's roles.
import { isSystemAdmin } from '../access.ts';

/** The roles a tenant may allow; readonly is not one of them. */
export const RUN_ROLE_CHOICES = ['tenant_admin', 'manager', 'user'] as const;
export type RunRole = (typeof RUN_ROLE_CHOICES)[number];
export const DEFAULT_RUN_ROLES: readonly RunRole[] = RUN_ROLE_CHOICES;

/** Stored form (comma-separated) -> the known roles it names, in choice order. */
export function parseRunRoles(stored: string | null | undefined): RunRole[] {
  if (stored == null) return [...DEFAULT_RUN_ROLES];
  const named = new Set(stored.split(',').map((r) => r.trim()));
  return RUN_ROLE_CHOICES.filter((r) => named.has(r));
}

export const formatRunRoles = (roles: readonly RunRole[]): string =>
  RUN_ROLE_CHOICES.filter((r) => roles.includes(r)).join(',');

/** null when the user may run workflows, else the refusal (a 403's text) saying who may enable it. */
export function runRefusal(
  user: { role: string; tenantId: number | null },
  tenantRoles: readonly RunRole[],
): string | null {
  if (isSystemAdmin(user)) return null;
  if (user.role === 'readonly')
    return 'The readonly role may not run or control autonomous workflows; an administrator can give you another role';
  if (user.tenantId == null) return 'A tenant is required to run or control autonomous workflows';
  if ((tenantRoles as readonly string[]).includes(user.role)) return null;
  const allowed = tenantRoles.length ? tenantRoles.join(', ') : 'no role';
  return `Your tenant allows ${allowed} to run autonomous workflows, not ${user.role}; a tenant admin can change this (PUT /api/tenants/${user.tenantId}/autonomous)`;
}
