// The only SQL for `audit_logs`: append, filtered listing inside a read scope, export, per-user activity.
import { and, count, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { ReadScope } from '../../domain/tenant-scope.ts';
import type { DatabaseHandle } from '../client.ts';
import { scopeCondition } from '../tenant-scope-sql.ts';

export interface AuditInsert {
  userId: number | null;
  tenantId: number | null;
  username: string | null;
  action: string;
  severity: string;
  resourceType: string | null;
  resourceId: string | null;
  details: string | null;
  ipAddress: string | null;
  success: boolean;
  requestId: string | null;
  targetTenantId: number | null;
  timestamp: Date;
}

export interface AuditFilters {
  userId?: number;
  username?: string;
  action?: string;
  resourceType?: string;
  severity?: string;
  /** Inclusive lower bound. */
  from?: Date;
  /** Exclusive upper bound. */
  before?: Date;
}

export type AuditRow = Awaited<ReturnType<ReturnType<typeof auditRepository>['list']>>[number];

export function auditRepository({ db, t }: DatabaseHandle) {
  const a = t.auditLogs;
  const ts = t.tenantSettings;

  /** `false` = nothing is visible (scope `none`). */
  const where = (scope: ReadScope, f: AuditFilters): SQL | undefined | false => {
    // Rows of the caller's tenant, and rows whose target was the caller's tenant.
    const inScope = scopeCondition(scope, a.tenantId, a.targetTenantId);
    if (inScope === false) return false;
    const parts: (SQL | undefined)[] = [inScope];
    if (f.userId !== undefined) parts.push(eq(a.userId, f.userId));
    if (f.username !== undefined) parts.push(eq(a.username, f.username));
    if (f.action !== undefined) parts.push(eq(a.action, f.action));
    if (f.resourceType !== undefined) parts.push(eq(a.resourceType, f.resourceType));
    if (f.severity !== undefined) parts.push(eq(a.severity, f.severity));
    if (f.from) parts.push(gte(a.timestamp, f.from));
    if (f.before) parts.push(lt(a.timestamp, f.before));
    return and(...parts);
  };

  return {
    /** Tenants whose settings turn the routine audit trail off (domain/audit-policy.ts). */
    async tenantsWithAuditOff(): Promise<Set<number>> {
      const rows = await db.select({ id: ts.tenantId }).from(ts).where(eq(ts.auditLogEnabled, false));
      return new Set(rows.map((r) => r.id));
    },
    async insert(row: AuditInsert): Promise<void> {
      await db.insert(a).values(row);
    },

    async list(scope: ReadScope, f: AuditFilters, page: { limit: number; offset: number }) {
      const w = where(scope, f);
      if (w === false) return [];
      return db
        .select()
        .from(a)
        .where(w)
        .orderBy(desc(a.timestamp), desc(a.id))
        .limit(page.limit)
        .offset(page.offset);
    },

    async count(scope: ReadScope, f: AuditFilters): Promise<number> {
      const w = where(scope, f);
      if (w === false) return 0;
      const [row] = await db.select({ n: count() }).from(a).where(w);
      return Number(row?.n ?? 0);
    },

    /** Every user's rows in the scope since `from`, newest first (activity summaries are small). */
    async forUserSince(scope: ReadScope, userId: number, from: Date, limit: number) {
      const w = where(scope, { userId, from });
      if (w === false) return [];
      return db.select().from(a).where(w).orderBy(desc(a.timestamp), desc(a.id)).limit(limit);
    },
  };
}
