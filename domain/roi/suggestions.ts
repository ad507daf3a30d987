// Optimization suggestions from concrete signals, pure (GET /api/optimization/suggestions). Each rule
// names its signal and threshold, so a suggestion can be checked against the figures it came from:
//   expensive_model_share   premium models (output price >= PREMIUM_OUTPUT_PRICE) carry >= 50 % of
//                           the cost; estimated saving = their cost minus the same tokens at the
//                           default (mid-tier) price.
//   low_cache_hit_rate      cache tokens / (input + cache tokens) < 20 % over >= 10,000 input tokens.
//   high_tokens_per_request a tool with >= 3 requests uses > 1.5x the overall tokens per request
//                           (only when at least two tools are in use).
//   unpriced_models         tokens were priced at the default price because no table entry matched.
//   idle_quota              a user's or tenant's token quota far above its use (idle-quota.ts).
import { ratio, round2 } from '../analytics/figures.ts';
import type { PricedCell, Totals } from './figures.ts';
import { groupTotals, totalsOf } from './figures.ts';
import { costOf, money, PREMIUM_OUTPUT_PRICE, type Pricing, priceFor } from './prices.ts';

export interface Suggestion {
  type:
    | 'expensive_model_share'
    | 'low_cache_hit_rate'
    | 'high_tokens_per_request'
    | 'unpriced_models'
    | 'idle_quota';
  severity: 'info' | 'warning';
  title: string;
  detail: string;
  signal: Record<string, unknown>;
  /** USD over the period, when the rule can estimate one. */
  estimated_saving?: number;
}

export const THRESHOLDS = {
  expensiveShare: 50,
  cacheHitRate: 20,
  cacheMinInput: 10_000,
  toolFactor: 1.5,
  toolMinRequests: 3,
} as const;

const tpr = (t: Totals) => (t.requests === 0 ? 0 : t.tokens / t.requests);

export function suggest(
  cells: readonly PricedCell[],
  cache: { inputTokens: number; cacheTokens: number },
  pricing: Pricing,
): Suggestion[] {
  const out: Suggestion[] = [];
  const all = totalsOf(cells);

  const premium = cells.filter((c) => priceFor(pricing, c.model).output >= PREMIUM_OUTPUT_PRICE);
  const premiumCost = totalsOf(premium).cost;
  const share = all.cost > 0 ? (premiumCost / all.cost) * 100 : 0;
  if (all.cost > 0 && share >= THRESHOLDS.expensiveShare) {
    const cheaper = premium.reduce((s, c) => s + costOf(pricing.fallback, c.inputTokens, c.outputTokens), 0);
    out.push({
      type: 'expensive_model_share',
      severity: 'warning',
      title: 'Premium models carry most of the cost',
      detail: `${round2(share)} % of the estimated cost comes from premium models; route routine requests to a mid-tier model.`,
      signal: {
        premium_cost: money(premiumCost),
        total_cost: money(all.cost),
        share_percent: round2(share),
        models: [...new Set(premium.map((c) => c.model))].sort(),
      },
      estimated_saving: money(Math.max(0, premiumCost - cheaper)),
    });
  }

  const cacheBase = cache.inputTokens + cache.cacheTokens;
  const hitRate = cacheBase > 0 ? (cache.cacheTokens / cacheBase) * 100 : 0;
  if (cache.inputTokens >= THRESHOLDS.cacheMinInput && hitRate < THRESHOLDS.cacheHitRate)
    out.push({
      type: 'low_cache_hit_rate',
      severity: 'info',
      title: 'Low prompt-cache hit rate',
      detail: `Only ${round2(hitRate)} % of prompt tokens came from the cache; stable system prompts and context reuse lower input cost.`,
      signal: {
        cache_tokens: cache.cacheTokens,
        input_tokens: cache.inputTokens,
        hit_rate_percent: round2(hitRate),
      },
    });

  const tools = groupTotals(cells, (c) => c.toolName);
  const overall = tpr(all);
  if (tools.length >= 2)
    for (const [tool, t] of tools)
      if (t.requests >= THRESHOLDS.toolMinRequests && tpr(t) > overall * THRESHOLDS.toolFactor)
        out.push({
          type: 'high_tokens_per_request',
          severity: 'info',
          title: `High tokens per request in ${tool}`,
          detail: `${tool} uses ${ratio(t.tokens, t.requests)} tokens per request against ${round2(overall)} overall; trim context or split tasks.`,
          signal: {
            tool_name: tool,
            tokens_per_request: ratio(t.tokens, t.requests),
            overall_tokens_per_request: round2(overall),
          },
        });

  const unpriced = cells.filter((c) => c.pricedBy === 'default');
  const unpricedTokens = unpriced.reduce((s, c) => s + c.inputTokens + c.outputTokens, 0);
  if (unpricedTokens > 0)
    out.push({
      type: 'unpriced_models',
      severity: 'info',
      title: 'Some usage was priced at the default price',
      detail:
        'Add these models to the price table (PUT /api/roi/prices, or the settings section `pricing`) for closer estimates.',
      signal: {
        tokens: unpricedTokens,
        models: [...new Set(unpriced.map((c) => c.model ?? '(none)'))].sort(),
      },
    });
  return out;
}
