// Who sees which alert (spec document 2 "Alerts", rule 5), pure: the list, the unread count, the
// read/delete endpoints, the SSE stream and the socket.io namespace all decide through `alertViewer`
// and `canSeeAlert` (the repository turns the same viewer into SQL).
//   - a user sees the alerts whose user_id is theirs;
//   - an administrator also sees tenant-wide alerts (user_id null) of their read scope: a tenant admin
//     those of its tenant, a system admin all of them; an admin without tenant sees no tenant-wide ones;
//   - the viewer's notification preference `min_severity` hides alerts below it (list, count, stream).
import { isAdministrator } from './access.ts';
import { inScope, type ReadScope, readScope } from './tenant-scope.ts';

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const DEFAULT_MIN_SEVERITY: Severity = 'warning';

export interface AlertViewer {
  userId: number;
  /** Tenant-wide alerts visible to this viewer (kind none: no tenant-wide alerts). */
  tenantWide: ReadScope;
  /** The severities at or above the viewer's min_severity. */
  severities: readonly Severity[];
}

/** The severities at or above `min`. */
export const severitiesFrom = (min: Severity): Severity[] => SEVERITIES.slice(SEVERITIES.indexOf(min));

export function alertViewer(
  user: { id: number; role: string; tenantId: number | null },
  permissions: ReadonlySet<string>,
  minSeverity: Severity,
): AlertViewer {
  return {
    userId: user.id,
    tenantWide: isAdministrator(user, permissions) ? readScope(user) : { kind: 'none' },
    severities: severitiesFrom(minSeverity),
  };
}

export function canSeeAlert(
  viewer: AlertViewer,
  alert: { user_id: number | null; tenant_id: number | null; severity: string },
): boolean {
  if (!(viewer.severities as readonly string[]).includes(alert.severity)) return false;
  if (alert.user_id != null) return alert.user_id === viewer.userId;
  return inScope(viewer.tenantWide, alert.tenant_id);
}
