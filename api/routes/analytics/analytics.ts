// Administrator analytics (spec document 2, "Analysis and analytics", the /api/analytics/* rows other
// than the forecast, which is in forecast.ts): the period report, efficiency figures and the export.
// All need an administrator (api/middleware/auth.ts requireAdmin: system admin, tenant admin, or
// admin_access); the export also needs export_analysis. System administrators see every tenant, a
// tenant admin its own (rule 5). The CSV export escapes cells exactly as the audit-log export does
// (domain/csv.ts: quoting, formula-looking cells prefixed with `'`, per OWASP).
import { Router } from 'express';
import { z } from 'zod';
import { ANOMALY_METHOD } from '../../../domain/analytics/anomalies.ts';
import { daySchema, windowEnding } from '../../../domain/analytics/days.ts';
import {
  amountsView,
  dailySeries,
  linearSlope,
  ratio,
  round2,
  userTotals,
} from '../../../domain/analytics/figures.ts';
import { csvLine } from '../../../domain/csv.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate, requireAdmin, requirePermission } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { anyObject, count, day, nullableString } from '../../openapi/shapes.ts';
import {
  ANALYSIS_WINDOW_DAYS,
  anomaliesIn,
  anomalyView,
  callerOf,
  readsOf,
  summarise,
  summaryView,
  toolComparison,
  userView,
} from './figures.ts';

const MAX_DAYS = 366;
const EXPORT_MAX_ROWS = 100_000;
const flag = z
  .enum(['true', 'false', '1', '0'])
  .default('true')
  .transform((v) => v === 'true' || v === '1');
const daysParam = z.coerce.number().int().min(1).max(MAX_DAYS).default(ANALYSIS_WINDOW_DAYS);
const reportQuery = z.object({
  end_date: daySchema.optional(),
  days: daysParam,
  trends: flag,
  anomalies: flag,
});
const exportQuery = z.object({ format: z.enum(['json', 'csv']).default('json'), days: daysParam });

const EXPORT_COLUMNS = [
  'date',
  'tool_name',
  'host_name',
  'sender_name',
  'tenant_id',
  'tokens',
  'input_tokens',
  'output_tokens',
  'messages',
  'requests',
] as const;
type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string | number>;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const getAnalyticsReport = endpoint({
  tags: ['analytics'],
  query: reportQuery,
  responses: {
    200: z.looseObject({
      period: z.looseObject({ start: day, end: day, days: count }),
      scope: z.looseObject({ tenant_id: z.number().int().nullable() }),
      summary: anyObject,
      by_tool: z.array(z.looseObject({ tool_name: z.string() })),
      top_users: z.array(anyObject),
      trends: anyObject.optional().meta({ description: 'With trends=true' }),
      anomalies: z
        .looseObject({ count, items: z.array(anyObject) })
        .optional()
        .meta({ description: 'With anomalies=true' }),
    }),
  },
});
const getAnalyticsEfficiency = endpoint({
  tags: ['analytics'],
  responses: {
    200: z.looseObject({
      start: day,
      end: day,
      overall: z.looseObject({ tokens: count, requests: count, messages: count }),
      by_tool: z.array(z.looseObject({ tool_name: z.string(), tokens: count, requests: count })),
      by_user: z.array(anyObject),
    }),
  },
});
const getAnalyticsExport = endpoint({
  tags: ['analytics'],
  description: 'format=csv answers text/csv with the same columns as the JSON rows.',
  query: exportQuery,
  alsoAnswers: { 200: ['text/csv'] },
  responses: {
    200: z.looseObject({
      start: day,
      end: day,
      days: count,
      count,
      truncated: z.boolean(),
      exported_at: z.string(),
      rows: z.array(
        z.looseObject({
          date: day,
          tool_name: z.string(),
          host_name: nullableString,
          sender_name: nullableString,
          tenant_id: z.number().int().nullable(),
          tokens: count,
          input_tokens: count,
          output_tokens: count,
          messages: count,
          requests: count,
        }),
      ),
    }),
  },
});

export function exportCsv(rows: readonly ExportRow[]): string {
  const lines = [EXPORT_COLUMNS.join(',')];
  for (const r of rows) lines.push(csvLine(EXPORT_COLUMNS.map((c) => r[c])));
  return `${lines.join('\r\n')}\r\n`;
}

export function analyticsRouter(deps: AppDeps): Router {
  const r = Router();
  const admin = [authenticate(deps), requireAdmin];
  const reads = readsOf(deps);

  r.get('/api/analytics/report', getAnalyticsReport, ...admin, async (req, res) => {
    const q = getAnalyticsReport.query(req);
    const c = callerOf(deps, req);
    const w = windowEnding(q.end_date ?? c.today, q.days);
    const s = await summarise(reads, c.scope, w);
    const body: Record<string, unknown> = {
      period: { start: w.start, end: w.end, days: q.days },
      scope:
        c.scope.kind === 'tenant' ? { tenant_id: c.scope.tenantId } : { tenant_id: null, all_tenants: true },
      summary: summaryView(s),
      by_tool: toolComparison(s.cells),
      top_users: s.users.slice(0, 10).map(userView),
    };
    if (q.trends) {
      const daily = dailySeries(s.cells, w.start, w.end);
      const tokens = daily.map((d) => d.tokens);
      const half = Math.floor(tokens.length / 2);
      const first = tokens.slice(0, half).reduce((a, v) => a + v, 0);
      const second = tokens.slice(tokens.length - half).reduce((a, v) => a + v, 0);
      const slope = round2(linearSlope(tokens));
      body.trends = {
        method: 'least-squares slope of daily tokens; halves compare the first and last floor(days/2) days',
        daily: daily.map((d) => ({ date: d.date, ...amountsView(d) })),
        slope_tokens_per_day: slope,
        direction: slope > 0 ? 'up' : slope < 0 ? 'down' : 'flat',
        first_half_tokens: first,
        second_half_tokens: second,
      };
    }
    if (q.anomalies) {
      const found = await anomaliesIn(reads, c.scope, w);
      body.anomalies = { method: ANOMALY_METHOD, count: found.length, items: found.map(anomalyView) };
    }
    res.json(body);
  });

  r.get('/api/analytics/efficiency', getAnalyticsEfficiency, ...admin, async (req, res) => {
    const c = callerOf(deps, req);
    const w = windowEnding(c.today, ANALYSIS_WINDOW_DAYS);
    const s = await summarise(reads, c.scope, w);
    const t = summaryView(s);
    res.json({
      start: w.start,
      end: w.end,
      overall: {
        tokens: t.tokens,
        requests: t.requests,
        messages: t.messages,
        tokens_per_request: t.tokens_per_request,
        tokens_per_message: ratio(t.tokens, t.messages),
        output_input_ratio: ratio(t.output_tokens, t.input_tokens),
        cache_share_percent: ratio(t.cache_tokens * 100, t.tokens),
      },
      by_tool: toolComparison(s.cells).map((x) => ({
        tool_name: x.tool_name,
        tokens: x.tokens,
        requests: x.requests,
        tokens_per_request: x.tokens_per_request,
        output_input_ratio: x.output_input_ratio,
      })),
      by_user: userTotals(await reads.userDays(c.scope, w)).map((u) => ({
        ...userView(u),
        tokens_per_request: ratio(u.tokens, u.requests),
        output_input_ratio: ratio(u.outputTokens, u.inputTokens),
        tokens_per_active_day: ratio(u.tokens, u.activeDays),
      })),
    });
  });

  r.get(
    '/api/analytics/export',
    getAnalyticsExport,
    ...admin,
    requirePermission('export_analysis'),
    async (req, res) => {
      const q = getAnalyticsExport.query(req);
      const c = callerOf(deps, req);
      const w = windowEnding(c.today, q.days);
      const rows: ExportRow[] = (await reads.senderDays(c.scope, w, EXPORT_MAX_ROWS)).map((x) => ({
        date: x.date,
        tool_name: x.toolName,
        host_name: x.hostName,
        sender_name: x.senderName,
        tenant_id: x.tenantId,
        tokens: x.tokens,
        input_tokens: x.inputTokens,
        output_tokens: x.outputTokens,
        messages: x.messages,
        requests: x.requests,
      }));
      await writeAudit(deps, req, {
        action: 'ANALYTICS_EXPORT',
        resourceType: 'analytics',
        details: { format: q.format, days: q.days, count: rows.length },
      });
      res.setHeader('content-disposition', `attachment; filename="analytics-${c.today}.${q.format}"`);
      if (q.format === 'csv') {
        res.type('text/csv; charset=utf-8').send(exportCsv(rows));
        return;
      }
      res.json({
        start: w.start,
        end: w.end,
        days: q.days,
        count: rows.length,
        truncated: rows.length === EXPORT_MAX_ROWS,
        exported_at: deps.now().toISOString(),
        rows,
      });
    },
  );

  return r;
}
