// The token forecast (spec document 2, "Analysis and analytics", "Limits", "Versioning" 2):
//   GET /api/analytics/forecast?days=1..90 (default 7), administrators only;
//   GET /api/analysis/forecast, its deprecated alias: the same answer plus `Deprecation: true` and
//   `Link: </api/analytics/forecast>; rel="successor-version"`.
// Authorization: platform_admin and legacy admin forecast all tenants; any other administrator
// (tenant_admin) only its own tenant, and 403 when it has none. An invalid `days` is a 400 with the
// spec's body (domain/analytics/forecast-days.ts).
// Method: Holt's linear (double exponential smoothing, domain/analytics/holt.ts) fitted to the daily
// tokens of daily_usage (every source) over the 56 complete days ending yesterday (days without usage
// count as 0); points start today, with a 95 % normal prediction interval. Tokens are rounded to
// integers and never below 0.
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { addDays, dayOf, windowEnding } from '../../../domain/analytics/days.ts';
import { dailySeries } from '../../../domain/analytics/figures.ts';
import { FORECAST_DAYS, parseForecastDays } from '../../../domain/analytics/forecast-days.ts';
import { holtFitBest, holtForecast } from '../../../domain/analytics/holt.ts';
import { ForbiddenError } from '../../../domain/errors.ts';
import { readScope, TENANT_KEY_ERRORS } from '../../../domain/tenant-scope.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate, requireAdmin } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { readsOf } from './figures.ts';

export const FORECAST_PATH = '/api/analytics/forecast';
export const DEPRECATED_FORECAST_PATH = '/api/analysis/forecast';
export const FORECAST_HISTORY_DAYS = 56;
export const FORECAST_INTERVAL_LEVEL = 0.95;

// `days` keeps the spec's own 400 body (parseForecastDays throws it from the transform; zod lets it
// through), so the declaration documents the parameter without changing the refusal.
const forecastQuery = z.object({
  days: z
    .unknown()
    .optional()
    .transform((v) => parseForecastDays(v))
    .meta({
      type: 'integer',
      minimum: FORECAST_DAYS.min,
      maximum: FORECAST_DAYS.max,
      default: FORECAST_DAYS.default,
      description: `Days to forecast, starting today (default ${FORECAST_DAYS.default})`,
    }),
});
const dayPoint = z.looseObject({ date: z.string(), tokens: z.number().int() });
export const forecastAnswer = z.looseObject({
  method: z.literal('holt_linear'),
  method_description: z.string(),
  parameters: z.looseObject({
    alpha: z.number(),
    beta: z.number(),
    level: z.number(),
    trend: z.number(),
    selection: z.string(),
  }),
  interval: z.looseObject({ level: z.number(), method: z.string() }),
  scope: z.looseObject({ all_tenants: z.boolean(), tenant_id: z.number().int().nullable() }),
  days: z.number().int(),
  history: z.looseObject({
    start: z.string(),
    end: z.string(),
    days: z.number().int(),
    daily: z.array(dayPoint),
  }),
  forecast: z.array(dayPoint.extend({ lower: z.number().int(), upper: z.number().int() }).loose()),
  total_forecast_tokens: z.number().int(),
});
const getForecast = endpoint({
  tags: ['analytics'],
  summary: 'Token forecast (administrators)',
  query: forecastQuery,
  responses: { 200: forecastAnswer },
});
const getForecastDeprecated = endpoint({
  tags: ['analytics'],
  summary: 'Token forecast: deprecated alias of /api/analytics/forecast',
  description: 'The same answer with `Deprecation: true` and a `Link` to the successor.',
  query: forecastQuery,
  responses: { 200: forecastAnswer },
});

export function forecastRouter(deps: AppDeps): Router {
  const r = Router();
  const reads = readsOf(deps);

  const forecast = async (req: Request, res: Response) => {
    const scope = readScope(req.auth.user);
    if (scope.kind === 'none') throw new ForbiddenError(TENANT_KEY_ERRORS.adminWithoutTenant);
    const { days } = getForecast.query(req);
    const today = dayOf(deps.now());
    const history = windowEnding(addDays(today, -1), FORECAST_HISTORY_DAYS);
    const series = dailySeries(await reads.usageCells(scope, history), history.start, history.end);
    const fit = holtFitBest(series.map((d) => d.tokens));
    const points = holtForecast(fit, days, FORECAST_INTERVAL_LEVEL).map((p) => ({
      date: addDays(today, p.h - 1),
      tokens: Math.max(0, Math.round(p.value)),
      lower: Math.max(0, Math.round(p.lower)),
      upper: Math.max(0, Math.round(p.upper)),
    }));
    res.json({
      method: 'holt_linear',
      method_description: "Holt's linear method (double exponential smoothing) on daily tokens",
      parameters: {
        alpha: fit.alpha,
        beta: fit.beta,
        level: Math.round(fit.level),
        trend: Math.round(fit.trend * 100) / 100,
        selection: 'grid search 0.1..0.9 minimising one-step squared error',
      },
      interval: { level: FORECAST_INTERVAL_LEVEL, method: 'normal, Holt h-step variance' },
      scope:
        scope.kind === 'all'
          ? { all_tenants: true, tenant_id: null }
          : { all_tenants: false, tenant_id: scope.tenantId },
      days,
      history: {
        start: history.start,
        end: history.end,
        days: FORECAST_HISTORY_DAYS,
        daily: series.map((d) => ({ date: d.date, tokens: d.tokens })),
      },
      forecast: points,
      total_forecast_tokens: points.reduce((s, p) => s + p.tokens, 0),
    });
  };

  r.get(FORECAST_PATH, getForecast, authenticate(deps), requireAdmin, forecast);
  // The alias marks every answer, refusals included, as deprecated.
  const deprecated = (_req: Request, res: Response, next: () => void) => {
    res.setHeader('Deprecation', 'true');
    res.setHeader('Link', `<${FORECAST_PATH}>; rel="successor-version"`);
    next();
  };
  r.get(
    DEPRECATED_FORECAST_PATH,
    getForecastDeprecated,
    deprecated,
    authenticate(deps),
    requireAdmin,
    forecast,
  );
  return r;
}
