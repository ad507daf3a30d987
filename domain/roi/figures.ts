// ROI and cost arithmetic, pure (spec document 2, "Return on investment"; rule 4: planning estimates
// from configurable assumptions, not verified savings). Inputs are the grouped usage rows the
// repository (db/repositories/roi.ts) reads; every figure here is a deterministic function of them.
//
// Cost: each (day, tool, model, user) cell of daily_messages is priced at its model's price
// (prices.ts). Usage that reached daily_usage without messages (proxied model calls, self-reported
// remote usage) is the "unattributed" remainder per day, tool and tenant: daily_usage minus the
// messages of that day, tool and tenant, never negative, priced at the single model daily_usage.models_used names, else at
// the default price. Requests are assistant responses (rule 3) only: the remainder has tokens, never
// requests (domain/usage/counting.ts; daily_usage's request_count is not read).
//
// Value: hours_saved = requests x avg_time_saved_per_request / 60 (assumed), except where the CLIs
//        measured active time (domain/roi/measured.ts): there the measured hours replace the
//        requests' assumed ones, and `hours_saved_source` says which it is (measured, assumed, mixed);
//        labor_value = hours_saved x hourly_labor_cost x productivity_multiplier;
//        net_benefit = labor_value - cost; roi_percent = net_benefit / cost x 100 (null when cost is 0).
// Token costs are list prices in USD (PRICE_CURRENCY); the labor value is in the `currency` label; no
// conversion is made between them.
import { round2 } from '../analytics/figures.ts';
import type { ProductivityFigures } from '../otlp/productivity.ts';
import type { Assumptions } from './assumptions.ts';
import { costOf, money, type Pricing, priceFor } from './prices.ts';

export interface ModelCell {
  date: string;
  toolName: string;
  model: string | null;
  userId: number | null;
  username: string | null;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  requests: number;
  /** The row's tenant (the usage report groups by it; the remainder is computed per tenant). */
  tenantId?: number | null;
}
export interface UsageRow {
  date: string;
  toolName: string;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheTokens: number;
  modelsUsed: string | null;
  tenantId?: number | null;
}
export interface PricedCell extends ModelCell {
  cost: number;
  pricedBy: 'model' | 'default';
  matched: string | null;
  source: 'messages' | 'unattributed';
  /** The CLIs' measured figures of this cell's day, tool and user (domain/roi/measured.ts), on one cell. */
  productivity?: ProductivityFigures;
  /** Its day, tool and user have measured active time: its requests add no assumed hours. */
  measured?: boolean;
}

export const ROI_NOTE =
  'Planning estimates from configurable assumptions, not verified savings. Token costs use list prices ' +
  'in USD from the pricing table; currency only labels the labor-cost assumption (no conversion).';

/** Models named in a daily_usage.models_used comma list, distinct, in order. */
const modelsOf = (list: string | null): string[] => [
  ...new Set(
    (list ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ),
];

/** Prices the message cells, then adds the unattributed daily_usage remainder (when rows are given). */
export function priceCells(cells: readonly ModelCell[], usage: readonly UsageRow[] | null, pricing: Pricing) {
  const out: PricedCell[] = cells.map((c) => {
    const p = priceFor(pricing, c.model);
    return {
      ...c,
      cost: costOf(p, c.inputTokens, c.outputTokens),
      pricedBy: p.priced_by,
      matched: p.matched,
      source: 'messages',
    };
  });
  if (!usage) return out;
  // Per tenant as well: one tenant's messages never cover another tenant's daily_usage.
  const key = (date: string, tool: string, tenant: number | null | undefined) =>
    `${date}\u0000${tool}\u0000${tenant ?? ''}`;
  const seen = new Map<string, { tokens: number; input: number; output: number }>();
  for (const c of cells) {
    const k = key(c.date, c.toolName, c.tenantId);
    const s = seen.get(k) ?? { tokens: 0, input: 0, output: 0 };
    s.tokens += c.tokens;
    s.input += c.inputTokens;
    s.output += c.outputTokens;
    seen.set(k, s);
  }
  const used = new Map<string, UsageRow & { models: Set<string> }>();
  for (const u of usage) {
    const k = key(u.date, u.toolName, u.tenantId);
    const acc = used.get(k);
    if (!acc) used.set(k, { ...u, models: new Set(modelsOf(u.modelsUsed)) });
    else {
      acc.tokens += u.tokens;
      acc.inputTokens += u.inputTokens;
      acc.outputTokens += u.outputTokens;
      for (const m of modelsOf(u.modelsUsed)) acc.models.add(m);
    }
  }
  for (const [k, u] of used) {
    const s = seen.get(k) ?? { tokens: 0, input: 0, output: 0 };
    const rest = {
      tokens: Math.max(0, u.tokens - s.tokens),
      inputTokens: Math.max(0, u.inputTokens - s.input),
      outputTokens: Math.max(0, u.outputTokens - s.output),
      requests: 0,
    };
    if (rest.tokens === 0 && rest.inputTokens === 0 && rest.outputTokens === 0) continue;
    const model = u.models.size === 1 ? [...u.models][0]! : null;
    const p = priceFor(pricing, model);
    out.push({
      date: u.date,
      toolName: u.toolName,
      model,
      userId: null,
      username: null,
      ...(u.tenantId === undefined ? {} : { tenantId: u.tenantId }),
      ...rest,
      cost: costOf(p, rest.inputTokens, rest.outputTokens),
      pricedBy: p.priced_by,
      matched: p.matched,
      source: 'unattributed',
    });
  }
  return out;
}

export interface Totals {
  requests: number;
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  /** USD, unrounded. */
  cost: number;
  /** Requests of cells with measured active time (they add no assumed hours); absent: none. */
  measuredRequests?: number;
  /** Measured active time (ms) of the cells; absent: none. */
  activeMs?: number;
}
export const zeroTotals = (): Totals => ({
  requests: 0,
  tokens: 0,
  inputTokens: 0,
  outputTokens: 0,
  cost: 0,
  measuredRequests: 0,
  activeMs: 0,
});

export function totalsOf(cells: readonly PricedCell[]): Totals {
  const t = zeroTotals();
  for (const c of cells) {
    t.requests += c.requests;
    t.tokens += c.tokens;
    t.inputTokens += c.inputTokens;
    t.outputTokens += c.outputTokens;
    t.cost += c.cost;
    if (c.measured) t.measuredRequests = (t.measuredRequests ?? 0) + c.requests;
    t.activeMs = (t.activeMs ?? 0) + (c.productivity?.activeMs ?? 0);
  }
  return t;
}

/** Cells grouped by a key, each group's totals, in key order. */
export function groupTotals<K extends string | number>(
  cells: readonly PricedCell[],
  keyOf: (c: PricedCell) => K,
): [K, Totals, PricedCell[]][] {
  const groups = new Map<K, PricedCell[]>();
  for (const c of cells) {
    const k = keyOf(c);
    const g = groups.get(k);
    if (g) g.push(c);
    else groups.set(k, [c]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, g]) => [k, totalsOf(g), g]);
}

export interface RoiFigures {
  requests: number;
  tokens: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  hours_saved: number;
  /** Whether hours_saved is measured active time, assumed from requests, or both (see the header). */
  hours_saved_source: 'measured' | 'assumed' | 'mixed';
  hours_saved_measured: number;
  hours_saved_assumed: number;
  labor_value: number;
  net_benefit: number;
  roi_percent: number | null;
}

/** The ROI of a group's totals under the assumptions (formulas in the header). */
export function roiOf(t: Totals, a: Assumptions): RoiFigures {
  const assumedRequests = t.requests - (t.measuredRequests ?? 0);
  const assumed = (assumedRequests * a.avg_time_saved_per_request) / 60;
  const measured = (t.activeMs ?? 0) / 3_600_000;
  const hours = assumed + measured;
  const value = hours * a.hourly_labor_cost * a.productivity_multiplier;
  const net = value - t.cost;
  return {
    requests: t.requests,
    tokens: t.tokens,
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cost: money(t.cost),
    hours_saved: round2(hours),
    hours_saved_source: measured > 0 ? (assumedRequests > 0 ? 'mixed' : 'measured') : 'assumed',
    hours_saved_measured: round2(measured),
    hours_saved_assumed: round2(assumed),
    labor_value: round2(value),
    net_benefit: round2(net),
    roi_percent: t.cost > 0 ? round2((net / t.cost) * 100) : null,
  };
}

/** Trailing moving average over `window` values (fewer at the start), money-rounded. */
export function movingAverage(values: readonly number[], window = 7): number[] {
  let sum = 0;
  return values.map((v, i) => {
    sum += v;
    if (i >= window) sum -= values[i - window]!;
    return money(sum / Math.min(i + 1, window));
  });
}
