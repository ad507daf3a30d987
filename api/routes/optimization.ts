// Optimization (spec document 2, "Return on investment" table): GET /api/optimization/suggestions
// (rules from concrete signals, domain/roi/suggestions.ts, and idle token quotas of the users in view
// and, for tenant-wide viewers without a user filter, of the tenants in scope, domain/roi/idle-quota.ts;
// the tool filter does not apply to quotas, which cover every tool), /cost-trend (estimated daily cost and its
// trailing 7-day moving average) and /efficiency (tokens per request, output/input ratio and cost per
// request, overall, per tool and per user). Same query, permission (view_analysis), tenant scope and
// own-figures rule as the ROI endpoints (roi.ts loadRoi); figures are planning estimates (rule 4).
import { Router } from 'express';
import { z } from 'zod';
import { quotaSubjects } from '../../db/repositories/roi.ts';
import { daysOf } from '../../domain/analytics/days.ts';
import { ratio } from '../../domain/analytics/figures.ts';
import { roiQuerySchema } from '../../domain/roi/assumptions.ts';
import { groupTotals, movingAverage, type Totals, totalsOf } from '../../domain/roi/figures.ts';
import { IDLE_QUOTA, idleQuotaSuggestions } from '../../domain/roi/idle-quota.ts';
import { money } from '../../domain/roi/prices.ts';
import { suggest, THRESHOLDS } from '../../domain/roi/suggestions.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requirePermission } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { byCost, loadRoi, roiEnvelope, userGroups } from './roi.ts';

export const MOVING_AVERAGE_DAYS = 7;

const efficiency = (t: Totals) => ({
  requests: t.requests,
  tokens: t.tokens,
  input_tokens: t.inputTokens,
  output_tokens: t.outputTokens,
  tokens_per_request: ratio(t.tokens, t.requests),
  output_input_ratio: ratio(t.outputTokens, t.inputTokens),
  cost: money(t.cost),
  cost_per_request: t.requests === 0 ? 0 : money(t.cost / t.requests),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const n = z.number();
const efficiencyAnswer = z.looseObject({ cost: n, cost_per_request: n });
const getOptimizationSuggestions = endpoint({
  tags: ['optimization'],
  query: roiQuerySchema,
  responses: {
    200: z.looseObject({
      ...roiEnvelope,
      thresholds: z.looseObject({}),
      suggestions: z.array(z.looseObject({})),
    }),
  },
});
const getOptimizationCostTrend = endpoint({
  tags: ['optimization'],
  query: roiQuerySchema,
  responses: {
    200: z.looseObject({
      ...roiEnvelope,
      moving_average_days: z.number().int(),
      total_cost: n,
      daily: z.array(z.looseObject({ date: z.string(), cost: n, moving_average: n.nullable() })),
    }),
  },
});
const getOptimizationEfficiency = endpoint({
  tags: ['optimization'],
  query: roiQuerySchema,
  responses: {
    200: z.looseObject({
      ...roiEnvelope,
      overall: efficiencyAnswer,
      by_tool: z.array(efficiencyAnswer.extend({ tool_name: z.string() })),
      by_user: z.array(efficiencyAnswer.extend({ username: z.string().nullable() })),
    }),
  },
});

export function optimizationRouter(deps: AppDeps): Router {
  const r = Router();
  const guard = [authenticate(deps), requirePermission('view_analysis')];

  r.get('/api/optimization/suggestions', getOptimizationSuggestions, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    const subjects = await quotaSubjects(deps.database.sql, x.scope, {
      start: x.w.start,
      end: x.w.end,
      userId: x.userId,
      withTenants: x.tenantWide && x.userId === undefined,
    });
    res.json({
      ...x.envelope,
      thresholds: { ...THRESHOLDS, idleQuota: IDLE_QUOTA },
      suggestions: [
        ...suggest(x.priced, x.cache, x.pricing),
        ...idleQuotaSuggestions(subjects, daysOf(x.w.start, x.w.end)),
      ],
    });
  });

  r.get('/api/optimization/cost-trend', getOptimizationCostTrend, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    const byDay = new Map(groupTotals(x.priced, (c) => c.date).map(([d, t]) => [d, t.cost]));
    const days = daysOf(x.w.start, x.w.end);
    const costs = days.map((d) => byDay.get(d) ?? 0);
    const avg = movingAverage(costs, MOVING_AVERAGE_DAYS);
    res.json({
      ...x.envelope,
      moving_average_days: MOVING_AVERAGE_DAYS,
      total_cost: money(costs.reduce((s, v) => s + v, 0)),
      daily: days.map((date, i) => ({ date, cost: money(costs[i]!), moving_average: avg[i]! })),
    });
  });

  r.get('/api/optimization/efficiency', getOptimizationEfficiency, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    res.json({
      ...x.envelope,
      overall: efficiency(totalsOf(x.priced)),
      by_tool: byCost(groupTotals(x.priced, (c) => c.toolName)).map(([tool, t]) => ({
        tool_name: tool,
        ...efficiency(t),
      })),
      by_user: userGroups(x.priced).map(([id, t, g]) => ({
        user_id: id,
        username: g.find((c) => c.username !== null)?.username ?? null,
        ...efficiency(t),
      })),
    });
  });

  return r;
}
