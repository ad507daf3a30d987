// The caller's own quota (spec document 2, "Governance, alerts, quotas"; response bodies not shown by
// the spec, so chosen here). Both read the same accounting the model proxy enforces.
//
//   GET  /api/quota/status?period=daily|monthly   (default daily)
//   POST /api/quota/check {tokens?: integer, requests?: integer}   would this much still fit?
//
// Token figures are actual tokens (user quotas are stored in millions and converted); `in_flight`
// counts requests admitted by the proxy and not finished yet; a null limit means no limit.
import { Router } from 'express';
import { z } from 'zod';
import { ServiceUnavailableError } from '../../domain/errors.ts';
import { dimensionName, type PeriodUsage, type QuotaLimits } from '../../domain/quota.ts';
import { QuotaCheckError, type QuotaStatus, quotaServiceFor } from '../../services/quota.ts';
import type { AppDeps } from '../deps.ts';
import { authenticate, requirePermission } from '../middleware/auth.ts';
import { parseInput } from '../middleware/validate.ts';

const statusQuery = z.object({ period: z.enum(['daily', 'monthly']).default('daily') });
const checkBody = z.object({
  tokens: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  requests: z.number().int().min(0).max(1_000_000).default(1),
});

function periodView(period: 'daily' | 'monthly', limits: QuotaLimits, u: PeriodUsage) {
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

export function quotaRouter(deps: AppDeps): Router {
  const r = Router();
  const quota = quotaServiceFor(deps);
  const auth = [authenticate(deps), requirePermission('view_quota')];
  const subjectOf = (req: Express.Request) => ({
    userId: req.auth.user.id,
    tenantId: req.auth.user.tenantId,
  });
  const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof QuotaCheckError) throw new ServiceUnavailableError('Quota status is unavailable');
      throw error;
    }
  };

  r.get('/api/quota/status', ...auth, async (req, res) => {
    const q = parseInput(statusQuery, req.query);
    const s = await guarded(() => quota.checkQuota(subjectOf(req)));
    res.json({ date: deps.now().toISOString().slice(0, 10), ...statusView(s, q.period) });
  });

  r.post('/api/quota/check', ...auth, async (req, res) => {
    const body = parseInput(checkBody, req.body);
    const s = await guarded(() => quota.checkQuota(subjectOf(req), body));
    res.json({
      allowed: s.allowed,
      exceeded: s.exceeded.map(dimensionName),
      daily: statusView(s, 'daily'),
      monthly: statusView(s, 'monthly'),
    });
  });

  return r;
}
