// Who may see and control an autonomous workflow (spec document 2, "Autonomous development": all
// endpoints require the workflow owner or an administrator). Pure; built on domain/access.ts and
// domain/tenant-scope.ts so the rule lives in one place:
//   outside the caller's tenant scope      -> not_found (404: another tenant's ids are not confirmed)
//   in scope, owner or administrator       -> ok (a tenant admin only inside its tenant)
//   in scope, anyone else                  -> forbidden (403)
import { type AccessSubject, canAccessOwned, isAdministrator } from '../access.ts';
import { inScope, readScope } from '../tenant-scope.ts';

export type WorkflowAccess = 'ok' | 'forbidden' | 'not_found';

export function workflowAccess(
  user: AccessSubject,
  permissions: ReadonlySet<string>,
  row: { userId: number; tenantId: number | null } | undefined,
): WorkflowAccess {
  if (!row) return 'not_found';
  if (!inScope(readScope(user), row.tenantId)) return row.userId === user.id ? 'ok' : 'not_found';
  if (canAccessOwned(user, row.userId, row.tenantId)) return 'ok';
  if (isAdministrator(user, permissions) && user.tenantId != null && user.tenantId === row.tenantId)
    return 'ok';
  return 'forbidden';
}

/** What a list shows: the scope's rows, only the caller's own unless an administrator. */
export function workflowListReader(user: AccessSubject, permissions: ReadonlySet<string>) {
  return {
    scope: readScope(user),
    ...(isAdministrator(user, permissions) ? {} : { ownerId: user.id }),
  };
}
