// Compliance (spec document 2, "Compliance (admin)"; issue 11 item 4): report types, report
// generation (json or formula-safe csv) with saved reports, audit patterns, anomalies, the security
// score, a user's activity profile, retention rules and the retention cleanup. Admin only
// (admin_access): a tenant administrator works inside its tenant, a system administrator sees every
// tenant and may name one with `tenant_id` (the tenant rule of domain/tenant-scope.ts resolveKeyTenant).
import type { Request } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import { retentionRepository } from '../../db/repositories/compliance/retention.ts';
import { usersRepository } from '../../db/repositories/users.ts';
import {
  MAX_REPORT_PERIOD_DAYS,
  REPORT_TYPE_NAMES,
  REPORT_TYPES,
} from '../../domain/compliance/report-types.ts';
import { RETENTION_LIMITS } from '../../domain/compliance/retention.ts';
import { BadRequestError, NotFoundError } from '../../domain/errors.ts';
import { inScope, type ReadScope, readScope, resolveKeyTenant } from '../../domain/tenant-scope.ts';
import { isCalendarDate } from '../../domain/usage/ingest-rows.ts';
import { writeAudit } from '../../services/audit.ts';
import { auditAnalysis } from '../../services/compliance/audit-analysis.ts';
import { complianceReports } from '../../services/compliance/reports.ts';
import { retentionService } from '../../services/compliance/retention.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requirePermission } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const calendarDate = z.string().refine(isCalendarDate, 'must be a date YYYY-MM-DD');
const tenantParam = { tenant_id: z.unknown().optional() };
const days = z.coerce.number('must be an integer').int('must be an integer').min(1).max(365).default(30);

const generateBody = z.object({
  report_type: z.enum(REPORT_TYPE_NAMES, `must be one of ${REPORT_TYPE_NAMES.join(', ')}`),
  period_start: calendarDate,
  period_end: calendarDate,
  format: z.enum(['json', 'csv'], 'must be json or csv').default('json'),
  ...tenantParam,
});
const savedQuery = z.object({
  limit: z.coerce.number('must be an integer').int('must be an integer').min(1).max(500).default(50),
  offset: z.coerce.number('must be an integer').int('must be an integer').min(0).default(0),
});
const windowQuery = z.object({ days, ...tenantParam });
const anomalyQuery = z.object({
  days,
  threshold: z.coerce.number('must be a number').positive('must be positive').max(100).default(3.5),
  ...tenantParam,
});
const retentionDays = (k: keyof typeof RETENTION_LIMITS) =>
  z
    .number('must be an integer')
    .int('must be an integer')
    .min(RETENTION_LIMITS[k].min, `must be at least ${RETENTION_LIMITS[k].min}`)
    .max(RETENTION_LIMITS[k].max, `must be at most ${RETENTION_LIMITS[k].max}`);
const rulesBody = z
  .object({
    audit_log_retention_days: retentionDays('audit_log_retention_days').optional(),
    data_retention_days: retentionDays('data_retention_days').optional(),
    ...tenantParam,
  })
  .refine(
    (b) => b.audit_log_retention_days !== undefined || b.data_retention_days !== undefined,
    'audit_log_retention_days or data_retention_days is required',
  );
const cleanupQuery = z.object({
  dry_run: z.enum(['true', 'false'], 'must be true or false').default('false'),
  ...tenantParam,
});

const DAY_MS = 86_400_000;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getUserProfile = endpoint({
  tags: ['compliance'],
  params: z.object({ user_id: z.coerce.number('must be an integer').int().positive().max(2_147_483_647) }),
  query: z.object({ days }),
  responses: {
    200: z.looseObject({
      user_id: z.number().int(),
      username: z.string(),
      role: z.string(),
      tenant_id: z.number().int().nullable(),
      days: z.number().int(),
      total_events: z.number().int(),
      by_day: z.array(z.looseObject({ date: z.string(), count: z.number().int() })),
    }),
  },
});
const retentionRule = z.looseObject({
  tenant_id: z.number().int(),
  audit_log_retention_days: z.number().int(),
  data_retention_days: z.number().int(),
});
const savedReport = z.looseObject({ report_id: z.string(), created_at: z.string(), summary: z.unknown() });
const getComplianceReports = endpoint({
  tags: ['compliance'],
  responses: {
    200: z.looseObject({
      report_types: z.array(z.looseObject({ type: z.string(), name: z.string() })),
      formats: z.array(z.string()),
      max_period_days: z.number().int(),
    }),
  },
});
const postComplianceReports = endpoint({
  tags: ['compliance'],
  description: 'format=csv answers text/csv (report id in X-Report-Id).',
  body: generateBody,
  alsoAnswers: { 201: ['text/csv'] },
  responses: {
    201: z.looseObject({ report_id: z.string(), summary: z.unknown(), rows: z.array(z.unknown()) }),
  },
});
const getComplianceReportsSaved = endpoint({
  tags: ['compliance'],
  query: savedQuery,
  responses: {
    200: z.looseObject({ reports: z.array(savedReport), limit: z.number().int(), offset: z.number().int() }),
  },
});
const getComplianceReportsId = endpoint({
  tags: ['compliance'],
  params: z.object({ report_id: z.string().min(1).max(64) }),
  responses: { 200: savedReport.extend({ content: z.unknown() }) },
});
const auditWindow = { days: z.number().int(), start: z.string(), end: z.string(), truncated: z.boolean() };
const getComplianceAuditPatterns = endpoint({
  tags: ['compliance'],
  query: windowQuery,
  responses: {
    200: z.looseObject({
      ...auditWindow,
      total_events: z.number().int(),
      failed_events: z.number().int(),
      by_hour: z.array(z.looseObject({ hour: z.number().int(), count: z.number().int() })),
      by_day: z.array(z.looseObject({ date: z.string(), count: z.number().int() })),
      top_actors: z.array(z.looseObject({})),
      by_action: z.array(z.looseObject({ action: z.string() })),
    }),
  },
});
const getComplianceAuditAnomalies = endpoint({
  tags: ['compliance'],
  query: anomalyQuery,
  responses: {
    200: z.looseObject({
      ...auditWindow,
      method: z.string(),
      threshold: z.number(),
      median: z.number().nullable(),
      mad: z.number().nullable(),
      anomalies: z.array(z.looseObject({})),
    }),
  },
});
const getComplianceAuditSecurityScore = endpoint({
  tags: ['compliance'],
  query: z.object(tenantParam),
  responses: {
    200: z.looseObject({
      tenant_id: z.number().int().nullable(),
      score: z.number(),
      weights: z.record(z.string(), z.number()),
      formula: z.string(),
      components: z.array(z.looseObject({ name: z.string() })),
      signals: z.looseObject({}),
      generated_at: z.string(),
    }),
  },
});
const getComplianceRetentionRules = endpoint({
  tags: ['compliance'],
  query: z.object(tenantParam),
  responses: { 200: z.looseObject({ rules: z.array(retentionRule), limits: z.looseObject({}) }) },
});
const putComplianceRetentionRules = endpoint({
  tags: ['compliance'],
  body: rulesBody,
  responses: { 200: retentionRule },
});
const postComplianceRetentionCleanup = endpoint({
  tags: ['compliance'],
  query: cleanupQuery,
  responses: { 200: z.looseObject({ dry_run: z.boolean() }) },
});

export function complianceRouter(deps: AppDeps): Router {
  const r = Router();
  const guard = [authenticate(deps), requirePermission('admin_access')];
  const reports = complianceReports(deps);
  const analysis = auditAnalysis(deps);
  const retention = retentionService(deps);
  const rulesRepo = retentionRepository(deps.database);

  /** The caller's scope, narrowed to one tenant when `tenant_id` is given (system admins: any). */
  const scopeOf = (req: Request, rawTenant: unknown): { scope: ReadScope; tenantId: number | null } => {
    if (rawTenant === undefined) {
      const scope = readScope(req.auth.user);
      return { scope, tenantId: scope.kind === 'tenant' ? scope.tenantId : null };
    }
    const d = resolveKeyTenant(req.auth.user, req.auth.permissions, rawTenant);
    return { scope: { kind: 'tenant', tenantId: d.tenantId }, tenantId: d.tenantId };
  };
  /** Tenants whose retention a request acts on (every tenant for a system admin without tenant_id). */
  const tenantsOf = async (req: Request, rawTenant: unknown): Promise<number[]> => {
    const { scope } = scopeOf(req, rawTenant);
    if (scope.kind === 'none') return [];
    if (scope.kind === 'tenant') {
      if (!(await rulesRepo.tenantExists(scope.tenantId))) throw new NotFoundError('Tenant not found');
      return [scope.tenantId];
    }
    return rulesRepo.tenantIds();
  };

  r.get('/api/compliance/reports', getComplianceReports, ...guard, (_req, res) => {
    res.json({
      report_types: REPORT_TYPES,
      formats: ['json', 'csv'],
      max_period_days: MAX_REPORT_PERIOD_DAYS,
    });
  });

  r.post('/api/compliance/reports', postComplianceReports, ...guard, async (req, res) => {
    const b = postComplianceReports.body(req);
    const span = (Date.parse(b.period_end) - Date.parse(b.period_start)) / DAY_MS + 1;
    if (span < 1) throw new BadRequestError('period_start must not be after period_end');
    if (span > MAX_REPORT_PERIOD_DAYS)
      throw new BadRequestError(`period_end: the period must not exceed ${MAX_REPORT_PERIOD_DAYS} days`);
    const { scope, tenantId } = scopeOf(req, b.tenant_id);
    const report = await reports.generate({
      scope,
      tenantId,
      reportType: b.report_type,
      periodStart: b.period_start,
      periodEnd: b.period_end,
      format: b.format,
      createdBy: req.auth.user.id,
    });
    await writeAudit(deps, req, {
      action: 'COMPLIANCE_REPORT_GENERATE',
      resourceType: 'compliance_report',
      resourceId: report.meta.report_id,
      targetTenantId: tenantId,
      details: {
        report_type: b.report_type,
        period_start: b.period_start,
        period_end: b.period_end,
        format: b.format,
      },
    });
    res.status(201);
    if (b.format === 'csv') {
      res.setHeader('x-report-id', report.meta.report_id);
      res.setHeader(
        'content-disposition',
        `attachment; filename="${b.report_type}-${report.meta.report_id}.csv"`,
      );
      res.type('text/csv; charset=utf-8').send(report.content);
      return;
    }
    res.json({ ...report.meta, summary: report.summary, rows: report.rows });
  });

  r.get('/api/compliance/reports/saved', getComplianceReportsSaved, ...guard, async (req, res) => {
    const q = getComplianceReportsSaved.query(req);
    const rows = await reports.list(readScope(req.auth.user), q);
    res.json({
      reports: rows.map((row) => ({
        ...row,
        created_at: row.created_at.toISOString(),
        summary: row.summary == null ? null : JSON.parse(row.summary),
      })),
      limit: q.limit,
      offset: q.offset,
    });
  });

  r.get('/api/compliance/reports/:report_id', getComplianceReportsId, ...guard, async (req, res) => {
    const id = getComplianceReportsId.params(req).report_id;
    const row = await reports.get(readScope(req.auth.user), id);
    if (!row) throw new NotFoundError('Report not found');
    res.json({
      ...row,
      created_at: row.created_at.toISOString(),
      summary: row.summary == null ? null : JSON.parse(row.summary),
      content: row.format === 'json' ? JSON.parse(row.content ?? 'null') : row.content,
    });
  });

  r.get('/api/compliance/audit/patterns', getComplianceAuditPatterns, ...guard, async (req, res) => {
    const q = getComplianceAuditPatterns.query(req);
    res.json(await analysis.patterns(scopeOf(req, q.tenant_id).scope, q.days));
  });

  r.get('/api/compliance/audit/anomalies', getComplianceAuditAnomalies, ...guard, async (req, res) => {
    const q = getComplianceAuditAnomalies.query(req);
    res.json(await analysis.anomalies(scopeOf(req, q.tenant_id).scope, q.days, q.threshold));
  });

  r.get(
    '/api/compliance/audit/security-score',
    getComplianceAuditSecurityScore,
    ...guard,
    async (req, res) => {
      const q = getComplianceAuditSecurityScore.query(req);
      const { scope, tenantId } = scopeOf(req, q.tenant_id);
      res.json({ tenant_id: tenantId, ...(await analysis.securityScore(scope)) });
    },
  );

  r.get('/api/compliance/audit/user/:user_id/profile', getUserProfile, ...guard, async (req, res) => {
    const userId = getUserProfile.params(req).user_id;
    const q = getUserProfile.query(req);
    const scope = readScope(req.auth.user);
    const target = await usersRepository(deps.database).findAnyById(userId);
    if (!target || !inScope(scope, target.tenantId)) throw new NotFoundError('User not found');
    const profile = await analysis.profile(scope, userId, q.days);
    res.json({
      user_id: target.id,
      username: target.username,
      role: target.role,
      tenant_id: target.tenantId,
      ...profile,
    });
  });

  r.get('/api/compliance/retention/rules', getComplianceRetentionRules, ...guard, async (req, res) => {
    const q = getComplianceRetentionRules.query(req);
    const ids = await tenantsOf(req, q.tenant_id);
    const rules = await Promise.all(ids.map((id) => rulesRepo.rules(id)));
    res.json({
      rules: rules.map((x) => ({
        tenant_id: x.tenantId,
        audit_log_retention_days: x.auditLogRetentionDays,
        data_retention_days: x.dataRetentionDays,
      })),
      limits: RETENTION_LIMITS,
    });
  });

  r.put('/api/compliance/retention/rules', putComplianceRetentionRules, ...guard, async (req, res) => {
    const b = putComplianceRetentionRules.body(req);
    const tenantId = resolveKeyTenant(req.auth.user, req.auth.permissions, b.tenant_id).tenantId;
    if (!(await rulesRepo.tenantExists(tenantId))) throw new NotFoundError('Tenant not found');
    const before = await rulesRepo.rules(tenantId);
    const after = {
      tenantId,
      auditLogRetentionDays: b.audit_log_retention_days ?? before.auditLogRetentionDays,
      dataRetentionDays: b.data_retention_days ?? before.dataRetentionDays,
    };
    await rulesRepo.saveRules(after, deps.now());
    const view = {
      tenant_id: tenantId,
      audit_log_retention_days: after.auditLogRetentionDays,
      data_retention_days: after.dataRetentionDays,
    };
    await writeAudit(deps, req, {
      action: 'COMPLIANCE_RETENTION_RULES_UPDATE',
      resourceType: 'tenant_settings',
      resourceId: tenantId,
      targetTenantId: tenantId,
      details: {
        before: {
          audit_log_retention_days: before.auditLogRetentionDays,
          data_retention_days: before.dataRetentionDays,
        },
        after: view,
      },
    });
    res.json(view);
  });

  r.post('/api/compliance/retention/cleanup', postComplianceRetentionCleanup, ...guard, async (req, res) => {
    const q = postComplianceRetentionCleanup.query(req);
    const tenantIds = await tenantsOf(req, q.tenant_id);
    const result = await retention.cleanup({ tenantIds, dryRun: q.dry_run === 'true' });
    await writeAudit(deps, req, {
      action: 'COMPLIANCE_RETENTION_CLEANUP',
      resourceType: 'retention',
      targetTenantId: tenantIds.length === 1 ? tenantIds[0] : null,
      details: {
        dry_run: result.dry_run,
        tenants: tenantIds.length,
        tables: result.tables,
        total: result.total,
      },
    });
    res.json(result);
  });

  return r;
}
