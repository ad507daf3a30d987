// Return on investment (spec document 2, "Return on investment"): GET /api/roi, /trend, /by-tool,
// /by-user, /summary, /cost-breakdown, /daily-costs, and /api/roi/pricing (the effective price table,
// read-only, kept for earlier clients; the price table and its admin edits are /api/roi/prices,
// roi-prices.ts, mounted here). Every cost reads the effective table (admin > config > builtin) through
// `currentPrices`. Every answer is labelled as a planning estimate (rule 4: `estimate: true` and
// `note`); `currency` only labels the labor value.
//
// Who sees what (permission view_analysis; tenant scope by rule 5 through domain/tenant-scope.ts):
// administrators and holders of `view_users` (managers) see their tenant's figures (system admins all
// tenants) and may filter by user_id; any other caller (role `user`) sees only their own figures: the
// user filter is forced to themselves and another user_id is a 403. Own-only figures come from their
// messages alone (daily_usage has no user), so unattributed proxied usage is not in them.
//
// The loading and envelope shared with the optimization endpoints (optimization.ts) live here.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { otelRepository } from '../../db/repositories/otel.ts';
import { roiRepository } from '../../db/repositories/roi.ts';
import { hasPermission, isAdministrator } from '../../domain/access.ts';
import { dayOf, daysOf, resolveWindow } from '../../domain/analytics/days.ts';
import { ratio } from '../../domain/analytics/figures.ts';
import { ForbiddenError } from '../../domain/errors.ts';
import { assumptionsOf, DEFAULT_WINDOW_DAYS, roiQuerySchema } from '../../domain/roi/assumptions.ts';
import {
  groupTotals,
  type PricedCell,
  priceCells,
  ROI_NOTE,
  roiOf,
  type Totals,
  totalsOf,
} from '../../domain/roi/figures.ts';
import { attachProductivity, productivityOf, productivityView } from '../../domain/roi/measured.ts';
import { money, PRICE_CURRENCY, PRICES_AS_OF, priceFor } from '../../domain/roi/prices.ts';
import { readScope } from '../../domain/tenant-scope.ts';
import { parseInput } from '../../domain/validation.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requirePermission } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { currentPrices, roiPricesRouter } from './roi-prices.ts';

export const OWN_FIGURES_ONLY = 'You may only view your own figures';

/** The query, the caller's view and the priced usage cells of one ROI or optimization request. */
export async function loadRoi(deps: AppDeps, req: Request) {
  const q = parseInput(roiQuerySchema, req.query);
  const { user, permissions } = req.auth;
  const w = resolveWindow({ start: q.start_date, end: q.end_date }, dayOf(deps.now()), DEFAULT_WINDOW_DAYS, {
    start: 'start_date',
    end: 'end_date',
  });
  const tenantWide = isAdministrator(user, permissions) || hasPermission(permissions, 'view_users');
  if (!tenantWide && q.user_id !== undefined && q.user_id !== user.id)
    throw new ForbiddenError(OWN_FIGURES_ONLY);
  const userId = tenantWide ? q.user_id : user.id;
  const scope = readScope(user);
  const pricing = (await currentPrices(deps)).pricing;
  const repo = roiRepository(deps.database.sql);
  const f = { start: w.start, end: w.end, toolName: q.tool_name, userId };
  const [cells, usage, measured] = await Promise.all([
    repo.modelCells(scope, f),
    userId === undefined ? repo.usageRows(scope, f) : Promise.resolve(null),
    otelRepository(deps.database).cells(scope, f),
  ]);
  // The CLIs' measured figures ride on the same cells (domain/roi/measured.ts).
  const priced = attachProductivity(priceCells(cells, usage, pricing), measured);
  const cache = (usage ?? []).reduce(
    (s, u) => ({ inputTokens: s.inputTokens + u.inputTokens, cacheTokens: s.cacheTokens + u.cacheTokens }),
    { inputTokens: 0, cacheTokens: 0 },
  );
  const envelope = {
    estimate: true as const,
    note: ROI_NOTE,
    period: { start_date: w.start, end_date: w.end },
    filters: { user_id: userId ?? null, tool_name: q.tool_name ?? null },
    own_figures_only: !tenantWide,
    scope:
      scope.kind === 'tenant'
        ? { tenant_id: scope.tenantId }
        : scope.kind === 'all'
          ? { all_tenants: true }
          : { none: true },
    currency: q.currency,
    cost_currency: PRICE_CURRENCY,
  };
  return { q, a: assumptionsOf(q), w, priced, cache, pricing, envelope, scope, userId, tenantWide };
}

/** Groups ordered by estimated cost, highest first (ties by key). */
export const byCost = <K>(groups: [K, Totals, PricedCell[]][]) =>
  [...groups].sort((x, y) => y[1].cost - x[1].cost || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));

/** Per-user groups (cells without a user are left to `unattributed`). */
export const userGroups = (cells: readonly PricedCell[]) =>
  byCost(
    groupTotals(
      cells.filter((c) => c.userId !== null),
      (c) => c.userId as number,
    ),
  );
const usernameOf = (g: PricedCell[]) => g.find((c) => c.username !== null)?.username ?? null;

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
// Response schemas (the envelope of loadRoi, roiOf figures), open objects; money is a decimal USD
// amount and a ROI percent is null when nothing was spent.
const n = z.number();
const roiFigures = z.looseObject({
  requests: n,
  tokens: n,
  cost: n,
  hours_saved: n,
  hours_saved_source: z.enum(['measured', 'assumed', 'mixed']),
  labor_value: n,
  net_benefit: n,
  roi_percent: n.nullable(),
});
/** The envelope every ROI and optimization answer starts with (loadRoi). */
export const roiEnvelope = {
  estimate: z.literal(true),
  note: z.string(),
  period: z.looseObject({ start_date: z.string(), end_date: z.string() }),
  currency: z.string(),
  cost_currency: z.string(),
};
const withAssumptions = { ...roiEnvelope, assumptions: z.looseObject({}) };
const costFigures = z.looseObject({ requests: n, tokens: n, cost: n, share_percent: n.nullable() });
const priceRow = z.looseObject({ model: z.string(), input: n, output: n, source: z.string() });
// loadRoi parses the query with roiQuerySchema: the same schema documents it.
const roiAnswer = (shape: Record<string, z.ZodType>) => ({
  query: roiQuerySchema,
  responses: { 200: z.looseObject(shape) },
});
/** The CLIs' measured figures of the period (null when none were received). */
export const productivityFigures = z
  .looseObject({
    lines_added: n,
    lines_removed: n,
    commits: n,
    pull_requests: n,
    edits_accepted: n,
    edits_rejected: n,
    edit_accept_rate: n.nullable(),
    active_hours: n,
  })
  .nullable();
const getRoi = endpoint({
  tags: ['roi'],
  ...roiAnswer({ ...withAssumptions, totals: roiFigures, productivity: productivityFigures }),
});
const getRoiTrend = endpoint({
  tags: ['roi'],
  ...roiAnswer({ ...withAssumptions, daily: z.array(roiFigures.extend({ date: z.string() })) }),
});
const getRoiByTool = endpoint({
  tags: ['roi'],
  ...roiAnswer({ ...withAssumptions, items: z.array(roiFigures.extend({ tool_name: z.string() })) }),
});
const getRoiByUser = endpoint({
  tags: ['roi'],
  ...roiAnswer({
    ...withAssumptions,
    items: z.array(roiFigures.extend({ user_id: z.number().int(), username: z.string().nullable() })),
    unattributed: roiFigures,
  }),
});
const getRoiSummary = endpoint({
  tags: ['roi'],
  ...roiAnswer({
    ...withAssumptions,
    totals: roiFigures,
    top_tools: z.array(roiFigures),
    top_users: z.array(roiFigures),
    pricing: z.looseObject({ prices_as_of: z.string(), default_priced_tokens: n }),
  }),
});
const getRoiCostBreakdown = endpoint({
  tags: ['roi'],
  ...roiAnswer({
    ...roiEnvelope,
    total_cost: n,
    by_model: z.array(costFigures.extend({ model: z.string().nullable() })),
    by_tool: z.array(costFigures.extend({ tool_name: z.string() })),
    by_source: z.array(costFigures.extend({ source: z.string() })),
  }),
});
const getRoiDailyCosts = endpoint({
  tags: ['roi'],
  ...roiAnswer({
    ...roiEnvelope,
    total_cost: n,
    daily: z.array(
      z.looseObject({
        date: z.string(),
        cost: n,
        tokens: n,
        requests: n,
        by_tool: z.array(z.looseObject({ tool_name: z.string(), cost: n })),
      }),
    ),
  }),
});
const getRoiPricing = endpoint({
  tags: ['roi'],
  responses: {
    200: z.looseObject({
      estimate: z.literal(true),
      note: z.string(),
      cost_currency: z.string(),
      prices_as_of: z.string(),
      unit: z.string(),
      default_price: z.looseObject({ input: n, output: n }),
      models: z.array(priceRow),
    }),
  },
});

export function roiRouter(deps: AppDeps): Router {
  const r = Router();
  const guard = [authenticate(deps), requirePermission('view_analysis')];
  r.use(roiPricesRouter(deps));

  r.get('/api/roi', getRoi, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    res.json({
      ...x.envelope,
      assumptions: x.a,
      totals: roiOf(totalsOf(x.priced), x.a),
      productivity: productivityView(productivityOf(x.priced)),
    });
  });

  r.get('/api/roi/trend', getRoiTrend, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    const days = new Map(groupTotals(x.priced, (c) => c.date).map(([d, t]) => [d, t]));
    res.json({
      ...x.envelope,
      assumptions: x.a,
      daily: daysOf(x.w.start, x.w.end).map((date) => ({
        date,
        ...roiOf(days.get(date) ?? totalsOf([]), x.a),
      })),
    });
  });

  r.get('/api/roi/by-tool', getRoiByTool, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    res.json({
      ...x.envelope,
      assumptions: x.a,
      items: byCost(groupTotals(x.priced, (c) => c.toolName)).map(([tool, t]) => ({
        tool_name: tool,
        ...roiOf(t, x.a),
      })),
    });
  });

  r.get('/api/roi/by-user', getRoiByUser, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    const rest = x.priced.filter((c) => c.userId === null);
    res.json({
      ...x.envelope,
      assumptions: x.a,
      items: userGroups(x.priced).map(([id, t, g]) => ({
        user_id: id,
        username: usernameOf(g),
        ...roiOf(t, x.a),
      })),
      unattributed: roiOf(totalsOf(rest), x.a),
    });
  });

  r.get('/api/roi/summary', getRoiSummary, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    const defaultPriced = x.priced.filter((c) => c.pricedBy === 'default');
    res.json({
      ...x.envelope,
      assumptions: x.a,
      totals: roiOf(totalsOf(x.priced), x.a),
      top_tools: byCost(groupTotals(x.priced, (c) => c.toolName))
        .slice(0, 5)
        .map(([tool, t]) => ({ tool_name: tool, ...roiOf(t, x.a) })),
      top_users: userGroups(x.priced)
        .slice(0, 5)
        .map(([id, t, g]) => ({ user_id: id, username: usernameOf(g), ...roiOf(t, x.a) })),
      pricing: {
        prices_as_of: PRICES_AS_OF,
        default_price: x.pricing.fallback,
        default_priced_tokens: defaultPriced.reduce((s, c) => s + c.inputTokens + c.outputTokens, 0),
      },
    });
  });

  r.get('/api/roi/cost-breakdown', getRoiCostBreakdown, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    const all = totalsOf(x.priced).cost;
    const costView = (t: Totals) => ({
      requests: t.requests,
      tokens: t.tokens,
      input_tokens: t.inputTokens,
      output_tokens: t.outputTokens,
      cost: money(t.cost),
      share_percent: ratio(t.cost * 100, all),
    });
    res.json({
      ...x.envelope,
      total_cost: money(all),
      by_model: byCost(groupTotals(x.priced, (c) => c.model ?? '')).map(([model, t]) => {
        const p = priceFor(x.pricing, model);
        return {
          model: model === '' ? null : model,
          priced_by: p.priced_by,
          matched: p.matched,
          input_price_per_million: p.input,
          output_price_per_million: p.output,
          ...costView(t),
        };
      }),
      by_tool: byCost(groupTotals(x.priced, (c) => c.toolName)).map(([tool, t]) => ({
        tool_name: tool,
        ...costView(t),
      })),
      by_source: byCost(groupTotals(x.priced, (c) => c.source)).map(([source, t]) => ({
        source,
        ...costView(t),
      })),
    });
  });

  r.get('/api/roi/daily-costs', getRoiDailyCosts, ...guard, async (req, res) => {
    const x = await loadRoi(deps, req);
    const days = new Map(groupTotals(x.priced, (c) => c.date).map(([d, t, g]) => [d, { t, g }]));
    res.json({
      ...x.envelope,
      total_cost: money(totalsOf(x.priced).cost),
      daily: daysOf(x.w.start, x.w.end).map((date) => {
        const d = days.get(date);
        return {
          date,
          cost: money(d?.t.cost ?? 0),
          tokens: d?.t.tokens ?? 0,
          requests: d?.t.requests ?? 0,
          by_tool: d
            ? groupTotals(d.g, (c) => c.toolName).map(([tool, t]) => ({
                tool_name: tool,
                cost: money(t.cost),
              }))
            : [],
        };
      }),
    });
  });

  r.get('/api/roi/pricing', getRoiPricing, ...guard, async (_req, res) => {
    const p = await currentPrices(deps);
    res.json({
      estimate: true,
      note: ROI_NOTE,
      cost_currency: PRICE_CURRENCY,
      prices_as_of: PRICES_AS_OF,
      unit: 'per million tokens',
      default_price: p.pricing.fallback,
      models: p.rows,
    });
  });

  return r;
}
