// The one audit writer. Every admin action, every remote operation and every platform-admin
// cross-tenant action goes through `writeAudit`. It fills the actor (user, tenant, username) from
// `req.auth`, the client address and the request id (pino-http's req.id) from the request. Callers put
// no secrets in `details`: no passwords, tokens or key values.
import type { Request } from 'express';
import { auditRepository } from '../db/repositories/audit.ts';
import {
  keptWhenTenantAuditOff,
  type SuppressedSummary,
  UnauthenticatedFailureLimiter,
} from '../domain/audit-policy.ts';
import { tenantsWithAuditOff } from './access-caches.ts';
import { raiseRepeatedRefusalAlert } from './alerts/producers.ts';
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
  /**
   * A failure a caller with a valid credential can repeat at will: bounded per (action, client address,
   * this key) like unauthenticated failures (domain/audit-policy.ts rule 3), e.g. `<session>:<reason>`.
   */
  rateLimitKey?: string;
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

const limiters = new WeakMap<AppDeps, { limiter: UnauthenticatedFailureLimiter; sweptAt: number }>();
const SWEEP_EVERY_MS = 10_000;

function limiterOf(deps: AppDeps) {
  let l = limiters.get(deps);
  if (!l) {
    l = { limiter: new UnauthenticatedFailureLimiter(), sweptAt: deps.now().getTime() };
    limiters.set(deps, l);
  }
  return l;
}

/**
 * Applies domain/audit-policy.ts: returns false when the record is not to be written (a routine
 * action of a tenant whose audit log is off, or a failure past the unauthenticated flood bound), and
 * writes the summaries of closed flood windows.
 */
async function admitted(deps: AppDeps, req: Request | null, entry: AuditEntry, tenantId: number | null) {
  if (tenantId != null && !keptWhenTenantAuditOff(entry) && (await tenantsWithAuditOff(deps)).has(tenantId))
    return false;
  const unauthenticated = !req?.auth && (entry.userId ?? null) === null && entry.success === false;
  const bounded = entry.success === false && entry.rateLimitKey !== undefined;
  const now = deps.now();
  const state = limiterOf(deps);
  let summaries: SuppressedSummary[] = [];
  let write = true;
  let repeatedSince: Date | undefined;
  if (unauthenticated || bounded)
    ({ write, summaries, repeatedSince } = state.limiter.admit(
      entry.action,
      clientIp(req),
      now,
      entry.rateLimitKey,
    ));
  if (bounded && repeatedSince)
    await raiseRepeatedRefusalAlert(deps, {
      action: entry.action,
      source: entry.rateLimitKey!,
      ipAddress: clientIp(req),
      tenantId,
      windowStart: repeatedSince,
    });
  if (now.getTime() - state.sweptAt >= SWEEP_EVERY_MS) {
    state.sweptAt = now.getTime();
    summaries = summaries.concat(state.limiter.sweep(now));
  }
  for (const s of summaries) await insertRecord(deps, null, summaryEntry(s), s.ipAddress);
  return write;
}

const summaryEntry = (s: SuppressedSummary): AuditEntry => ({
  action: 'AUDIT_SUPPRESSED',
  success: false,
  severity: 'warning',
  userId: null,
  tenantId: null,
  username: null,
  details: {
    action: s.action,
    suppressed: s.suppressed,
    window_start: s.windowStart.toISOString(),
    ...(s.source !== undefined ? { source: s.source } : {}),
  },
});

const clientIp = (req: Request | null) => req?.ip?.slice(0, 64) ?? null;

/**
 * Writes one audit record (unless the audit policy drops it). A failed write is logged (at error
 * level) and does not fail the request: the action it records has already happened.
 */
export async function writeAudit(deps: AppDeps, req: Request | null, entry: AuditEntry): Promise<void> {
  const actor = req?.auth?.user;
  const tenantId = entry.tenantId !== undefined ? entry.tenantId : (actor?.tenantId ?? null);
  try {
    if (!(await admitted(deps, req, entry, tenantId))) return;
  } catch (err) {
    (req?.log ?? deps.logger).error({ err, action: entry.action }, 'audit policy check failed');
  }
  await insertRecord(deps, req, { ...entry, tenantId }, clientIp(req));
}

async function insertRecord(deps: AppDeps, req: Request | null, entry: AuditEntry, ipAddress: string | null) {
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
      ipAddress,
      success: entry.success ?? true,
      requestId: requestIdOf(req),
      targetTenantId: entry.targetTenantId ?? null,
      timestamp: deps.now(),
    });
  } catch (err) {
    (req?.log ?? deps.logger).error({ err, action: entry.action }, 'audit write failed');
  }
}
