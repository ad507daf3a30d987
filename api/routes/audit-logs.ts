// Audit logs (document 2, "Governance and content"): /api/audit/logs and its aliases /api/audit-logs
// and /api/governance/audit-logs, the export, and a user's activity. Reading needs view_audit_logs,
// exporting export_audit_logs (administrators hold both through admin_access; managers hold both by
// their role). System administrators see every tenant; everyone else only their own (document 2,
// rule 5): rows of their tenant and rows whose target was their tenant.
import type { Request } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import { type AuditFilters, type AuditRow, auditRepository } from '../../db/repositories/audit.ts';
import { usersRepository } from '../../db/repositories/users.ts';
import { csvLine } from '../../domain/csv.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { inScope, readScope } from '../../domain/tenant-scope.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requirePermission } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

export const AUDIT_LOG_PATHS = ['/api/audit/logs', '/api/audit-logs', '/api/governance/audit-logs'];
export const DEFAULT_AUDIT_PAGE_SIZE = 100;
const EXPORT_MAX_ROWS = 100_000;

const dateOrTime = z
  .string()
  .refine(
    (v) => /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v) && !Number.isNaN(Date.parse(v)),
    'must be YYYY-MM-DD or an ISO 8601 timestamp',
  );
const range = { start_date: dateOrTime.optional(), end_date: dateOrTime.optional() };
const listQuery = z.object({
  user_id: z.coerce.number().int().positive().max(2_147_483_647).optional(),
  username: z.string().min(1).max(100).optional(),
  action: z.string().min(1).max(100).optional(),
  resource_type: z.string().min(1).max(50).optional(),
  severity: z.string().min(1).max(20).optional(),
  ...range,
  limit: z.coerce.number().int().min(1).max(1000).default(DEFAULT_AUDIT_PAGE_SIZE),
  offset: z.coerce.number().int().min(0).default(0),
});
const exportQuery = z.object({ ...range, format: z.enum(['json', 'csv']).default('json') });
const activityQuery = z.object({ days: z.coerce.number().int().min(1).max(3650).default(30) });

const isDay = (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v);
const startOf = (v: string) => new Date(isDay(v) ? `${v}T00:00:00Z` : v);
/** End dates are inclusive: a day includes all of it, a timestamp includes itself. */
const endOf = (v: string) =>
  new Date(isDay(v) ? Date.parse(`${v}T00:00:00Z`) + 86_400_000 : Date.parse(v) + 1);

function timeRange(q: { start_date?: string; end_date?: string }): Pick<AuditFilters, 'from' | 'before'> {
  const from = q.start_date ? startOf(q.start_date) : undefined;
  const before = q.end_date ? endOf(q.end_date) : undefined;
  if (from && before && from.getTime() >= before.getTime())
    throw new BadRequestError('start_date must not be after end_date');
  return { from, before };
}

const parseDetails = (d: string | null): unknown => {
  if (d == null) return null;
  try {
    return JSON.parse(d);
  } catch {
    return d;
  }
};

export const auditView = (a: AuditRow) => ({
  id: a.id,
  timestamp: a.timestamp.toISOString(),
  user_id: a.userId,
  tenant_id: a.tenantId,
  username: a.username,
  action: a.action,
  severity: a.severity,
  resource_type: a.resourceType,
  resource_id: a.resourceId,
  details: parseDetails(a.details),
  ip_address: a.ipAddress,
  success: a.success,
  request_id: a.requestId,
  target_tenant_id: a.targetTenantId,
});

const CSV_COLUMNS = [
  'id',
  'timestamp',
  'user_id',
  'tenant_id',
  'username',
  'action',
  'severity',
  'resource_type',
  'resource_id',
  'success',
  'ip_address',
  'request_id',
  'target_tenant_id',
  'details',
] as const;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const ns = z.string().nullable();
const ni = z.number().int().nullable();
const auditRecord = z.looseObject({
  id: z.number().int(),
  timestamp: z.string(),
  user_id: ni,
  tenant_id: ni,
  username: ns,
  action: z.string(),
  severity: z.string(),
  resource_type: ns,
  resource_id: ns,
  details: z.unknown(),
  ip_address: ns,
  success: z.boolean(),
  request_id: ns,
  target_tenant_id: ni,
});
const listLogs = endpoint({
  tags: ['audit-logs'],
  summary: "Audit records in the caller's scope",
  query: listQuery,
  responses: {
    200: z.looseObject({
      logs: z.array(auditRecord),
      total: z.number().int(),
      limit: z.number().int(),
      offset: z.number().int(),
    }),
  },
});
const getAuditLogsExport = endpoint({
  tags: ['audit-logs'],
  description: 'format=csv answers text/csv with the same columns.',
  query: exportQuery,
  alsoAnswers: { 200: ['text/csv'] },
  responses: {
    200: z.looseObject({
      logs: z.array(auditRecord),
      count: z.number().int(),
      exported_at: z.string(),
      truncated: z.boolean(),
    }),
  },
});
const getAuditUserIdActivity = endpoint({
  tags: ['audit-logs'],
  params: z.object({ user_id: z.coerce.number().int().positive().max(2_147_483_647) }),
  query: activityQuery,
  responses: {
    200: z.looseObject({
      user_id: z.number().int(),
      username: ns,
      days: z.number().int(),
      start: z.string(),
      end: z.string(),
      total_actions: z.number().int(),
      failed_actions: z.number().int(),
      by_action: z.record(z.string(), z.number()),
      by_day: z.array(z.looseObject({ date: z.string(), count: z.number().int() })),
      last_activity: ns,
      recent: z.array(auditRecord),
    }),
  },
});

export function toCsv(rows: ReturnType<typeof auditView>[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) lines.push(csvLine(CSV_COLUMNS.map((c) => r[c])));
  return `${lines.join('\r\n')}\r\n`;
}

export function auditLogsRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const repo = () => auditRepository(deps.database);
  const scopeOf = (req: Request) => readScope(req.auth.user);

  r.get(AUDIT_LOG_PATHS, listLogs, auth, requirePermission('view_audit_logs'), async (req, res) => {
    const q = listLogs.query(req);
    const filters: AuditFilters = {
      userId: q.user_id,
      username: q.username,
      action: q.action,
      resourceType: q.resource_type,
      severity: q.severity,
      ...timeRange(q),
    };
    const scope = scopeOf(req);
    const [rows, total] = await Promise.all([
      repo().list(scope, filters, { limit: q.limit, offset: q.offset }),
      repo().count(scope, filters),
    ]);
    res.json({ logs: rows.map(auditView), total, limit: q.limit, offset: q.offset });
  });

  r.get(
    '/api/audit/logs/export',
    getAuditLogsExport,
    auth,
    requirePermission('export_audit_logs'),
    async (req, res) => {
      const q = getAuditLogsExport.query(req);
      const rows = (await repo().list(scopeOf(req), timeRange(q), { limit: EXPORT_MAX_ROWS, offset: 0 })).map(
        auditView,
      );
      await writeAudit(deps, req, {
        action: 'AUDIT_LOG_EXPORT',
        resourceType: 'audit_logs',
        details: {
          format: q.format,
          count: rows.length,
          start_date: q.start_date ?? null,
          end_date: q.end_date ?? null,
        },
      });
      const stamp = deps.now().toISOString().slice(0, 10);
      res.setHeader('content-disposition', `attachment; filename="audit-logs-${stamp}.${q.format}"`);
      if (q.format === 'csv') {
        res.type('text/csv; charset=utf-8').send(toCsv(rows));
        return;
      }
      res.json({
        logs: rows,
        count: rows.length,
        exported_at: deps.now().toISOString(),
        truncated: rows.length === EXPORT_MAX_ROWS,
      });
    },
  );

  r.get(
    '/api/audit/user/:user_id/activity',
    getAuditUserIdActivity,
    auth,
    requirePermission('view_audit_logs'),
    async (req, res) => {
      const userId = getAuditUserIdActivity.params(req).user_id;
      const q = getAuditUserIdActivity.query(req);
      const scope = scopeOf(req);
      const target = await usersRepository(deps.database).findAnyById(userId);
      if (!inScope(scope, target?.tenantId) && scope.kind !== 'all')
        throw new ForbiddenError('Cross-tenant access denied');
      if (!target) throw new NotFoundError('User not found');
      const now = deps.now();
      const from = new Date(now.getTime() - q.days * 86_400_000);
      const rows = await repo().forUserSince(scope, userId, from, EXPORT_MAX_ROWS);
      const byAction: Record<string, number> = {};
      const byDay: Record<string, number> = {};
      let failed = 0;
      for (const a of rows) {
        byAction[a.action] = (byAction[a.action] ?? 0) + 1;
        const day = a.timestamp.toISOString().slice(0, 10);
        byDay[day] = (byDay[day] ?? 0) + 1;
        if (!a.success) failed++;
      }
      res.json({
        user_id: target.id,
        username: target.username,
        days: q.days,
        start: from.toISOString(),
        end: now.toISOString(),
        total_actions: rows.length,
        failed_actions: failed,
        by_action: byAction,
        by_day: Object.entries(byDay)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([date, count]) => ({ date, count })),
        last_activity: rows[0]?.timestamp.toISOString() ?? null,
        recent: rows.slice(0, 20).map(auditView),
      });
    },
  );

  return r;
}
