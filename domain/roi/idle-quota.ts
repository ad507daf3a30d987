// The idle-quota optimization suggestion (GET /api/optimization/suggestions, type `idle_quota`), pure.
// A user (token quotas in millions, spec rule 2) or a tenant (token limits in tokens) whose assigned
// daily or monthly token quota is far above what it used over the period gets a suggestion to lower it,
// with the figures that justify it:
//   daily    average tokens per day of the period / daily quota             < IDLE_QUOTA.usedPercent %
//   monthly  tokens of the period scaled to 30 days / monthly quota         < IDLE_QUOTA.usedPercent %
// The suggested quota keeps headroom over what was seen: daily = the peak day x IDLE_QUOTA.headroom,
// monthly = the 30-day projection x IDLE_QUOTA.headroom, rounded up (users: whole millions, at least
// 1; tenants: thousands of tokens, at least 1,000). It is made only when it is below the current quota.
// A subject with no quota set (null) or a quota of 0 gets nothing for that quota.
import { round2 } from '../analytics/figures.ts';
import type { Suggestion } from './suggestions.ts';

export const IDLE_QUOTA = { usedPercent: 20, monthDays: 30, headroom: 1.5 } as const;

export interface QuotaSubject {
  kind: 'user' | 'tenant';
  id: number;
  name: string | null;
  tenantId: number | null;
  /** Users: millions of tokens; tenants: tokens. Null: no quota. */
  dailyTokenQuota: number | null;
  monthlyTokenQuota: number | null;
  /** Tokens used per day of the period (days without use may be absent). */
  tokensByDay: ReadonlyMap<string, number>;
}

interface QuotaFinding {
  quota: string;
  unit: 'million tokens' | 'tokens';
  current: number;
  suggested: number;
  used_percent: number;
  average_daily_tokens?: number;
  projected_monthly_tokens?: number;
  peak_daily_tokens: number;
}

export function idleQuotaSuggestions(
  subjects: readonly QuotaSubject[],
  days: readonly string[],
): Suggestion[] {
  const out: Suggestion[] = [];
  const n = days.length;
  if (n === 0) return out;
  for (const s of subjects) {
    const inPeriod = new Set(days);
    let total = 0;
    let peak = 0;
    for (const [day, tokens] of s.tokensByDay)
      if (inPeriod.has(day)) {
        total += tokens;
        peak = Math.max(peak, tokens);
      }
    const user = s.kind === 'user';
    const unit = user ? 1_000_000 : 1;
    const roundUp = (tokens: number) =>
      user ? Math.max(1, Math.ceil(tokens / 1_000_000)) : Math.max(1000, Math.ceil(tokens / 1000) * 1000);
    const findings: QuotaFinding[] = [];
    const check = (quota: string, limit: number | null, used: number, basis: number, extra: object) => {
      if (limit === null || limit <= 0) return;
      const usedPercent = (used / (limit * unit)) * 100;
      if (usedPercent >= IDLE_QUOTA.usedPercent) return;
      const suggested = roundUp(basis * IDLE_QUOTA.headroom);
      if (suggested >= limit) return;
      findings.push({
        quota,
        unit: user ? 'million tokens' : 'tokens',
        current: limit,
        suggested,
        used_percent: round2(usedPercent),
        ...extra,
        peak_daily_tokens: peak,
      });
    };
    const average = total / n;
    const projected = average * IDLE_QUOTA.monthDays;
    check(user ? 'daily_token_quota' : 'daily_token_limit', s.dailyTokenQuota, average, peak, {
      average_daily_tokens: round2(average),
    });
    check(user ? 'monthly_token_quota' : 'monthly_token_limit', s.monthlyTokenQuota, projected, projected, {
      projected_monthly_tokens: Math.round(projected),
    });
    if (findings.length === 0) continue;
    const who = user ? `user ${s.name ?? s.id}` : `tenant ${s.name ?? s.id}`;
    out.push({
      type: 'idle_quota',
      severity: 'info',
      title: `Token quota of ${who} is far above its use`,
      detail: findings
        .map(
          (f) =>
            `${f.quota} ${f.current} ${f.unit}: ${f.used_percent} % used on average over ${n} days; ` +
            `${f.suggested} ${f.unit} would still leave ${IDLE_QUOTA.headroom}x the ${f.quota.startsWith('daily') ? 'peak day' : '30-day projection'}`,
        )
        .join('; '),
      signal: {
        subject: s.kind,
        ...(user ? { user_id: s.id, username: s.name } : { tenant_id: s.id, tenant_name: s.name }),
        tenant_id: s.tenantId,
        period_days: n,
        tokens_in_period: total,
        quotas: findings,
      },
    });
  }
  return out;
}
