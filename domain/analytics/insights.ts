// User segmentation and rule-based recommendations, pure.
//
// Segmentation: users active in the window (tokens > 0) are split by the quartiles of their token
// totals (type-7 quantiles, robust-stats.ts): `heavy` at or above the 75th percentile, `light` at or
// below the 25th, `moderate` between; users in scope without usage are `inactive`.
//
// Recommendations: each rule looks at one figure and, when it fires, says what it saw and what to do.
import { quantile } from './robust-stats.ts';

export const SEGMENTS = ['heavy', 'moderate', 'light', 'inactive'] as const;
export type Segment = (typeof SEGMENTS)[number];

export function segmentUsers<U extends { tokens: number }>(
  active: readonly U[],
): { p25: number; p75: number; segmentOf: (u: U) => Segment } {
  const totals = active.filter((u) => u.tokens > 0).map((u) => u.tokens);
  const p25 = totals.length ? quantile(totals, 0.25) : 0;
  const p75 = totals.length ? quantile(totals, 0.75) : 0;
  return {
    p25,
    p75,
    segmentOf: (u) =>
      u.tokens <= 0 ? 'inactive' : u.tokens >= p75 ? 'heavy' : u.tokens <= p25 ? 'light' : 'moderate',
  };
}

export interface RecommendationInput {
  anomalies: number;
  /** Share (0..1) of the window's tokens used by the top user, and how many users were active. */
  topUserShare: number;
  activeUsers: number;
  inactiveUsers: number;
  /** Tokens per request per tool, and overall. */
  tools: { toolName: string; tokensPerRequest: number }[];
  overallTokensPerRequest: number;
  /** Percentage change of tokens, last 7 days against the 7 before (null when there was none before). */
  weeklyChangePercent: number | null;
}

export interface Recommendation {
  type: string;
  priority: 'high' | 'medium' | 'low';
  title: string;
  detail: string;
}

export const RULES = {
  concentrationShare: 0.5,
  concentrationMinUsers: 3,
  toolCostFactor: 2,
  growthPercent: 50,
} as const;

export function recommend(i: RecommendationInput): Recommendation[] {
  const out: Recommendation[] = [];
  if (i.anomalies > 0)
    out.push({
      type: 'review_anomalies',
      priority: 'high',
      title: 'Review unusual usage',
      detail: `${i.anomalies} user-day(s) deviate strongly from their users' usual token use (see /api/analysis/anomaly-detection).`,
    });
  if (i.weeklyChangePercent !== null && i.weeklyChangePercent >= RULES.growthPercent)
    out.push({
      type: 'usage_growth',
      priority: 'medium',
      title: 'Usage is growing fast',
      detail: `Tokens of the last 7 days are ${i.weeklyChangePercent}% above the 7 days before; check quotas and the forecast.`,
    });
  if (i.activeUsers >= RULES.concentrationMinUsers && i.topUserShare > RULES.concentrationShare)
    out.push({
      type: 'usage_concentration',
      priority: 'medium',
      title: 'One user dominates usage',
      detail: `The top user used ${Math.round(i.topUserShare * 100)}% of all tokens; check whether a personal quota fits.`,
    });
  for (const t of i.tools)
    if (
      i.overallTokensPerRequest > 0 &&
      t.tokensPerRequest > RULES.toolCostFactor * i.overallTokensPerRequest
    )
      out.push({
        type: 'tool_efficiency',
        priority: 'medium',
        title: `${t.toolName} uses many tokens per request`,
        detail: `${t.tokensPerRequest} tokens per request against ${i.overallTokensPerRequest} overall; review prompts and context size.`,
      });
  if (i.inactiveUsers > 0)
    out.push({
      type: 'inactive_users',
      priority: 'low',
      title: 'Users without usage',
      detail: `${i.inactiveUsers} user(s) had no usage in the window; offer onboarding or reclaim seats.`,
    });
  return out;
}
