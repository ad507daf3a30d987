// The caller's own quota (spec document 2, "Governance, alerts, quotas"; response bodies not shown by
// the spec, so chosen here). Both read the same accounting the model proxy enforces.
//
//   GET  /api/quota/status?period=daily|monthly   (default daily)
//   POST /api/quota/check {tokens?: integer, requests?: integer}   would this much still fit?
//   GET  /api/quota/status/all (admin)            every user's and tenant's day and month vs limits
//   GET  /api/quota/alerts (admin)                ?acknowledged=true|false, limit (50), offset (0)
//   POST /api/quota/alerts/:alert_id/acknowledge (admin)
//
// Admin reads are tenant-scoped (domain/tenant-scope.ts): a tenant admin sees its tenant's users,
// tenant and alerts, a system administrator all of them; an alert outside the scope is a 404.
//
// Token figures are actual tokens (user quotas are stored in millions and converted); `in_flight`
// counts requests admitted by the proxy and not finished yet; a null limit means no limit.
import { Router } from 'express';
import { z } from 'zod';
import { type QuotaAlertRow, quotaAlertsRepository } from '../../db/repositories/quota-alerts.ts';
import { rawScopeCondition } from '../../db/tenant-scope-sql.ts';
import { NotFoundError, ServiceUnavailableError } from '../../domain/errors.ts';
import { dimensionName, type PeriodUsage, type QuotaLimits } from '../../domain/quota.ts';
import { inScope, readScope } from '../../domain/tenant-scope.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import {
  type AllQuotaStatus,
  QuotaCheckError,
  type QuotaStatus,
  quotaServiceFor,
} from '../../services/quota.ts';
import { authenticate, requireAdmin, requirePermission } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { count, day } from '../openapi/shapes.ts';
import { allStatusAnswer, quotaAlertAnswer, statusAnswer } from './quota-answers.ts';

const statusQuery = z.object({ period: z.enum(['daily', 'monthly']).default('daily') });
/** Default page size of alerts (spec document 2, Limits). */
export const DEFAULT_ALERT_PAGE_SIZE = 50;
const alertsQuery = z.object({
  acknowledged: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(DEFAULT_ALERT_PAGE_SIZE),
  offset: z.coerce.number().int().min(0).default(0),
});
const alertParams = z.object({ alert_id: z.coerce.number().int().positive().max(2_147_483_647) });
const checkBody = z.object({
  tokens: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  requests: z.number().int().min(0).max(1_000_000).default(1),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getQuotaStatus = endpoint({
  tags: ['quota'],
  query: statusQuery,
  responses: { 200: statusAnswer.extend({ date: day }) },
  errors: [503],
});
const postQuotaCheck = endpoint({
  tags: ['quota'],
  body: checkBody,
  responses: {
    200: z.looseObject({
      allowed: z.boolean(),
      exceeded: z.array(z.string()),
      daily: statusAnswer,
      monthly: statusAnswer,
    }),
  },
  errors: [503],
});
const getQuotaStatusAll = endpoint({ tags: ['quota'], responses: { 200: allStatusAnswer }, errors: [503] });
const getQuotaAlerts = endpoint({
  tags: ['quota'],
  query: alertsQuery,
  responses: { 200: z.looseObject({ alerts: z.array(quotaAlertAnswer), total: count }) },
});
const postQuotaAlertsIdAcknowledge = endpoint({
  tags: ['quota'],
  params: alertParams,
  responses: { 200: z.looseObject({ success: z.literal(true), alert: quotaAlertAnswer }) },
});

/** One period of a subject's quota (shared with api/routes/admin-quota.ts). */
export function periodView(period: 'daily' | 'monthly', limits: QuotaLimits, u: PeriodUsage) {
  const tokenLimit = period === 'daily' ? limits.dailyTokens : limits.monthlyTokens;
  const requestLimit = period === 'daily' ? limits.dailyRequests : limits.monthlyRequests;
  return {
    tokens_used: u.tokensUsed,
    requests_used: u.requestsUsed,
    requests_in_flight: u.requestsReserved,
    token_limit: tokenLimit,
    request_limit: requestLimit,
    tokens_remaining: tokenLimit === null ? null : Math.max(0, tokenLimit - u.tokensUsed - u.tokensReserved),
    requests_remaining:
      requestLimit === null ? null : Math.max(0, requestLimit - u.requestsUsed - u.requestsReserved),
  };
}

function statusView(s: QuotaStatus, period: 'daily' | 'monthly') {
  const pick = (x: { daily: PeriodUsage; monthly: PeriodUsage }) =>
    period === 'daily' ? x.daily : x.monthly;
  return {
    period,
    within_quota: s.allowed,
    exceeded: s.exceeded.map(dimensionName),
    user: periodView(period, s.user.limits, pick(s.user)),
    tenant: s.tenant ? periodView(period, s.tenant.limits, pick(s.tenant)) : null,
  };
}

/** Every user's (and, with `tenants`, every tenant's) day and month against the limits. */
export function allStatusView(s: AllQuotaStatus) {
  return {
    date: s.day,
    month: s.month,
    users: s.users.map((u) => ({
      user_id: u.userId,
      username: u.username,
      tenant_id: u.tenantId,
      within_quota: u.exceeded.length === 0,
      exceeded: u.exceeded.map(dimensionName),
      daily: periodView('daily', u.limits, u.daily),
      monthly: periodView('monthly', u.limits, u.monthly),
    })),
    tenants: s.tenants.map((t) => ({
      tenant_id: t.tenantId,
      name: t.name,
      within_quota: t.exceeded.length === 0,
      exceeded: t.exceeded.map(dimensionName),
      daily: periodView('daily', t.limits, t.daily),
      monthly: periodView('monthly', t.limits, t.monthly),
    })),
  };
}

const alertView = (a: QuotaAlertRow) => ({
  id: a.id,
  user_id: a.userId,
  tenant_id: a.tenantId,
  alert_type: a.alertType,
  quota_type: a.quotaType,
  period: a.period,
  period_key: a.periodKey,
  threshold: a.threshold,
  current_usage: a.currentUsage,
  quota_limit: a.quotaLimit,
  percentage: a.percentage,
  acknowledged: a.acknowledged,
  acknowledged_by: a.acknowledgedBy,
  acknowledged_at: a.acknowledgedAt?.toISOString() ?? null,
  created_at: a.createdAt.toISOString(),
});

/** QuotaCheckError (the accounting could not be read) as a 503; anything else unchanged. */
export async function quotaGuarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof QuotaCheckError) throw new ServiceUnavailableError('Quota status is unavailable');
    throw error;
  }
}

export function quotaRouter(deps: AppDeps): Router {
  const r = Router();
  const quota = quotaServiceFor(deps);
  const auth = [authenticate(deps), requirePermission('view_quota')];
  const subjectOf = (req: Express.Request) => ({
    userId: req.auth.user.id,
    tenantId: req.auth.user.tenantId,
  });
  const guarded = quotaGuarded;
  const admin = [authenticate(deps), requireAdmin];
  const alerts = quotaAlertsRepository(deps.database);

  r.get('/api/quota/status', getQuotaStatus, ...auth, async (req, res) => {
    const q = getQuotaStatus.query(req);
    const s = await guarded(() => quota.checkQuota(subjectOf(req)));
    res.json({ date: deps.now().toISOString().slice(0, 10), ...statusView(s, q.period) });
  });

  r.post('/api/quota/check', postQuotaCheck, ...auth, async (req, res) => {
    const body = postQuotaCheck.body(req);
    const s = await guarded(() => quota.checkQuota(subjectOf(req), body));
    res.json({
      allowed: s.allowed,
      exceeded: s.exceeded.map(dimensionName),
      daily: statusView(s, 'daily'),
      monthly: statusView(s, 'monthly'),
    });
  });

  r.get('/api/quota/status/all', getQuotaStatusAll, ...admin, async (req, res) => {
    const s = await guarded(() => quota.statusOfAll(readScope(req.auth.user)));
    res.json(allStatusView(s));
  });

  r.get('/api/quota/alerts', getQuotaAlerts, ...admin, async (req, res) => {
    const q = getQuotaAlerts.query(req);
    const scope = rawScopeCondition(readScope(req.auth.user), 'tenant_id');
    const page = { limit: q.limit, offset: q.offset };
    if (scope === false) {
      res.json({ alerts: [], total: 0, ...page });
      return;
    }
    const filters = { acknowledged: q.acknowledged };
    const [rows, total] = await Promise.all([
      alerts.list(scope, filters, page),
      alerts.count(scope, filters),
    ]);
    res.json({ alerts: rows.map(alertView), total, ...page });
  });

  r.post(
    '/api/quota/alerts/:alert_id/acknowledge',
    postQuotaAlertsIdAcknowledge,
    ...admin,
    async (req, res) => {
      const { alert_id } = postQuotaAlertsIdAcknowledge.params(req);
      const found = await alerts.findById(alert_id);
      if (!found || !inScope(readScope(req.auth.user), found.tenantId))
        throw new NotFoundError('Quota alert not found');
      await alerts.acknowledge(alert_id, req.auth.user.id, deps.now());
      const alert = (await alerts.findById(alert_id)) ?? found;
      await writeAudit(deps, req, {
        action: 'QUOTA_ALERT_ACKNOWLEDGE',
        resourceType: 'quota_alert',
        resourceId: alert_id,
        targetTenantId: found.tenantId,
        details: { dedupe_key: found.dedupeKey, already_acknowledged: found.acknowledged },
      });
      res.json({ success: true, alert: alertView(alert) });
    },
  );

  return r;
}
