// Agent usage reports (POST /api/remote/usage-report), pure: how much of a self-declared report may
// count. A report counts only within what is left of every quota of the session's user and tenant
// (daily and monthly, tokens and requests): it is clipped to the room left, never charged beyond.
import type { PeriodUsage, QuotaAsk, QuotaLimits } from './quota.ts';

export interface QuotaStanding {
  limits: QuotaLimits;
  daily: PeriodUsage;
  monthly: PeriodUsage;
}

/** Room left under every limit of the standings (limit - used - reserved, at least 0; null: no limit). */
export function roomLeft(standings: readonly QuotaStanding[]): {
  tokens: number | null;
  requests: number | null;
} {
  let tokens: number | null = null;
  let requests: number | null = null;
  const take = (current: number | null, limit: number | null, used: number) =>
    limit === null ? current : Math.max(0, Math.min(current ?? Number.POSITIVE_INFINITY, limit - used));
  for (const s of standings) {
    for (const [u, tokenLimit, requestLimit] of [
      [s.daily, s.limits.dailyTokens, s.limits.dailyRequests],
      [s.monthly, s.limits.monthlyTokens, s.limits.monthlyRequests],
    ] as const) {
      tokens = take(tokens, tokenLimit, u.tokensUsed + u.tokensReserved);
      requests = take(requests, requestLimit, u.requestsUsed + u.requestsReserved);
    }
  }
  return { tokens, requests };
}

/**
 * What of `asked` may count given the room left. A reservation needs room for at least one token and
 * one request (domain/quota.ts), so where either is exhausted nothing counts.
 */
export function clipToRoom(
  asked: QuotaAsk,
  room: { tokens: number | null; requests: number | null },
): QuotaAsk {
  if ((room.tokens ?? 1) < 1 || (room.requests ?? 1) < 1) return { tokens: 0, requests: 0 };
  return {
    tokens: Math.min(asked.tokens, room.tokens ?? asked.tokens),
    requests: Math.min(asked.requests, room.requests ?? asked.requests),
  };
}
