// The one audit writer. Every admin action, every remote operation and every platform-admin
// cross-tenant action goes through `writeAudit`. It fills the actor (user, tenant, username) from
// `req.auth`, the client address and the request id (pino-http's req.id) from the request. Callers put
// no secrets in `details`: no passwords, tokens or key values.
import type { Request } from 'express';
import { auditRepository } from '../db/repositories/audit.ts';
import type { AppDeps } from './deps.ts';

export interface AuditEntry {
  action: string;
  resourceType?: string;
  resourceId?: string | number;
  details?: Record<string, unknown>;
  success?: boolean;
  severity?: string;
  targetTenantId?: number | null;
  /** Override the actor (for example a failed login, where nobody is authenticated). */
  userId?: number | null;
  tenantId?: number | null;
  username?: string | null;
}

const repos = new WeakMap<AppDeps['database'], ReturnType<typeof auditRepository>>();
const repo = (deps: AppDeps) => {
  let r = repos.get(deps.database);
  if (!r) {
    r = auditRepository(deps.database);
    repos.set(deps.database, r);
  }
  return r;
};

/** The request id pino-http assigned (also echoed as the x-request-id response header). */
export const requestIdOf = (req: Request | null): string | null =>
  req && req.id != null ? String(req.id).slice(0, 64) : null;

/**
 * Writes one audit record. A failed write is logged (at error level) and does not fail the request:
 * the action it records has already happened.
 */
export async function writeAudit(deps: AppDeps, req: Request | null, entry: AuditEntry): Promise<void> {
  const actor = req?.auth?.user;
  const details = entry.details && Object.keys(entry.details).length ? JSON.stringify(entry.details) : null;
  try {
    await repo(deps).insert({
      userId: entry.userId !== undefined ? entry.userId : (actor?.id ?? null),
      tenantId: entry.tenantId !== undefined ? entry.tenantId : (actor?.tenantId ?? null),
      username:
        (entry.username !== undefined ? entry.username : (actor?.username ?? null))?.slice(0, 100) ?? null,
      action: entry.action,
      severity: entry.severity ?? (entry.success === false ? 'warning' : 'info'),
      resourceType: entry.resourceType ?? null,
      resourceId: entry.resourceId != null ? String(entry.resourceId).slice(0, 128) : null,
      details,
      ipAddress: req?.ip?.slice(0, 64) ?? null,
      success: entry.success ?? true,
      requestId: requestIdOf(req),
      targetTenantId: entry.targetTenantId ?? null,
      timestamp: deps.now(),
    });
  } catch (err) {
    (req?.log ?? deps.logger).error({ err, action: entry.action }, 'audit write failed');
  }
}
