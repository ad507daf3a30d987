/**
 * Quota arithmetic, pure (spec document 2: users quota fields, tenant_quotas, quota_usage,
 * tenant_usage, request-counting rule 3).
 *
 * - Periods are UTC calendar days and months. quota_usage keeps a `daily` row keyed by the day
 *   (YYYY-MM-DD) and a `monthly` row keyed by the first day of the month (YYYY-MM-01).
 * - User token quotas are stored in millions; request quotas in requests; null = no personal limit.
 * - Tenant limits are actual token and request counts; a tenant without a tenant_quotas row has the
 *   spec's defaults.
 * - One request is one assistant response: one model call that the provider answered.
 * - A quota dimension has room for a request when used + reserved + max(ask, 1) <= limit: a request
 *   needs at least one request and at least one token of room left. `reserved` counts requests
 *   admitted but not yet settled (in flight), so concurrent requests never pass a request limit and
 *   pass a token limit by at most what the requests in flight consume (their tokens are unknown until
 *   the response ends).
 */
import { DEFAULT_TENANT_QUOTAS } from './tenants.ts';

export type QuotaPeriod = 'daily' | 'monthly';
export type QuotaScope = 'user' | 'tenant';
export type QuotaMeasure = 'tokens' | 'requests';

/** User token quotas are stored in millions of tokens (spec rule 2). */
export const TOKENS_PER_USER_QUOTA_UNIT = 1_000_000;
/**
 * The largest user token quota (in millions) whose token figure is still an exact integer: a larger
 * one made `token_limit` and `tokens_remaining` pass Number.MAX_SAFE_INTEGER (found by `npm run fuzz`).
 */
export const MAX_USER_TOKEN_QUOTA_MILLIONS = Math.floor(Number.MAX_SAFE_INTEGER / TOKENS_PER_USER_QUOTA_UNIT);

/** Limits in actual tokens and requests; null = unlimited. */
export interface QuotaLimits {
  dailyTokens: number | null;
  monthlyTokens: number | null;
  dailyRequests: number | null;
  monthlyRequests: number | null;
}

/** One period's counters. */
export interface PeriodUsage {
  tokensUsed: number;
  requestsUsed: number;
  tokensReserved: number;
  requestsReserved: number;
}

export const EMPTY_PERIOD_USAGE: PeriodUsage = Object.freeze({
  tokensUsed: 0,
  requestsUsed: 0,
  tokensReserved: 0,
  requestsReserved: 0,
});

/** What a caller wants to spend: by default one request of unknown size. */
export interface QuotaAsk {
  tokens: number;
  requests: number;
}

export const ONE_REQUEST: QuotaAsk = Object.freeze({ tokens: 0, requests: 1 });

export interface QuotaExceeded {
  scope: QuotaScope;
  period: QuotaPeriod;
  measure: QuotaMeasure;
  /** Used plus reserved (in flight). */
  current: number;
  limit: number;
}

/** YYYY-MM-DD of the UTC day. */
export function dayKey(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** YYYY-MM-01 of the UTC month: the key of the `monthly` quota_usage row. */
export function monthKey(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}

/** YYYY-MM-01 of the following UTC month (exclusive end of the month's day range). */
export function nextMonthKey(at: Date): string {
  const next = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return dayKey(next);
}

/** Seconds until the period containing `at` ends (for Retry-After). */
export function secondsUntilPeriodEnd(period: QuotaPeriod, at: Date): number {
  const end =
    period === 'daily'
      ? Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1)
      : Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((end - at.getTime()) / 1000));
}

/** A user's personal limits in actual tokens (stored in millions) and requests. */
export function userQuotaLimits(user: {
  dailyTokenQuota: number | null;
  monthlyTokenQuota: number | null;
  dailyRequestQuota: number | null;
  monthlyRequestQuota: number | null;
}): QuotaLimits {
  const tokens = (millions: number | null) =>
    millions == null ? null : millions * TOKENS_PER_USER_QUOTA_UNIT;
  return {
    dailyTokens: tokens(user.dailyTokenQuota),
    monthlyTokens: tokens(user.monthlyTokenQuota),
    dailyRequests: user.dailyRequestQuota ?? null,
    monthlyRequests: user.monthlyRequestQuota ?? null,
  };
}

/** A tenant's limits (actual counts); the spec defaults when it has no tenant_quotas row. */
export function tenantQuotaLimits(
  row:
    | {
        dailyTokenLimit: number;
        monthlyTokenLimit: number;
        dailyRequestLimit: number;
        monthlyRequestLimit: number;
      }
    | null
    | undefined,
): QuotaLimits {
  return {
    dailyTokens: row?.dailyTokenLimit ?? DEFAULT_TENANT_QUOTAS.daily_token_limit,
    monthlyTokens: row?.monthlyTokenLimit ?? DEFAULT_TENANT_QUOTAS.monthly_token_limit,
    dailyRequests: row?.dailyRequestLimit ?? DEFAULT_TENANT_QUOTAS.daily_request_limit,
    monthlyRequests: row?.monthlyRequestLimit ?? DEFAULT_TENANT_QUOTAS.monthly_request_limit,
  };
}

/**
 * The room rule for one dimension (see the header): the same inequality the reservation UPDATE
 * evaluates in SQL, so a read-only check and a reservation agree.
 */
export function hasRoom(used: number, reserved: number, ask: number, limit: number | null): boolean {
  return limit === null || used + reserved + Math.max(ask, 1) <= limit;
}

/** Every dimension of one scope that has no room for `ask`. */
export function exceededDimensions(
  scope: QuotaScope,
  limits: QuotaLimits,
  daily: PeriodUsage,
  monthly: PeriodUsage,
  ask: QuotaAsk = ONE_REQUEST,
): QuotaExceeded[] {
  const out: QuotaExceeded[] = [];
  const check = (period: QuotaPeriod, measure: QuotaMeasure, u: PeriodUsage, limit: number | null) => {
    const used = measure === 'tokens' ? u.tokensUsed : u.requestsUsed;
    const reserved = measure === 'tokens' ? u.tokensReserved : u.requestsReserved;
    const wanted = measure === 'tokens' ? ask.tokens : ask.requests;
    if (!hasRoom(used, reserved, wanted, limit))
      out.push({ scope, period, measure, current: used + reserved, limit: limit as number });
  };
  check('daily', 'requests', daily, limits.dailyRequests);
  check('daily', 'tokens', daily, limits.dailyTokens);
  check('monthly', 'requests', monthly, limits.monthlyRequests);
  check('monthly', 'tokens', monthly, limits.monthlyTokens);
  return out;
}

/** `user_daily_tokens`-style name of a dimension (API responses, audit details). */
export function dimensionName(e: Pick<QuotaExceeded, 'scope' | 'period' | 'measure'>): string {
  return `${e.scope}_${e.period}_${e.measure}`;
}

/** A sentence for the 429 body, naming the first exhausted dimension. */
export function quotaExceededMessage(exceeded: readonly QuotaExceeded[]): string {
  const first = exceeded[0];
  if (!first) return 'Quota exceeded';
  const who = first.scope === 'user' ? 'Your' : "Your tenant's";
  return `${who} ${first.period} ${first.measure === 'tokens' ? 'token' : 'request'} quota is exhausted (${first.current} of ${first.limit} used)`;
}

/** The period a refusal clears at soonest (daily before monthly). */
export function refusalPeriod(exceeded: readonly QuotaExceeded[]): QuotaPeriod {
  return exceeded.some((e) => e.period === 'monthly') ? 'monthly' : 'daily';
}
