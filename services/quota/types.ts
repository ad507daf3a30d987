// The quota service's public types (re-exported by services/quota.ts) and the small helpers its parts
// share: the period keys of a moment, the deadlock retry of PostgreSQL statements, error summaries.
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import type { QuotaUsageRepository, TenantPeriods, UserPeriods } from '../../db/repositories/quota-usage.ts';
import {
  dayKey,
  monthKey,
  nextMonthKey,
  type PeriodUsage,
  type QuotaExceeded,
  type QuotaLimits,
} from '../../domain/quota.ts';
import type { Usage } from '../../domain/usage/usage.ts';

export interface QuotaSubject {
  userId: number;
  /** Null for a user outside any tenant: only personal limits apply. */
  tenantId: number | null;
}

/** Where usage happened, for daily_usage and the session totals. */
export interface UsageContext {
  sessionId?: string | null;
  toolName: string;
  hostName: string;
}

export type Periods = UserPeriods & TenantPeriods;

export interface Reservation {
  readonly subject: QuotaSubject;
  readonly periods: Periods;
  readonly tokens: number;
  readonly requests: number;
  settled: boolean;
}

export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; exceeded: QuotaExceeded[] };

export interface QuotaStatus {
  allowed: boolean;
  exceeded: QuotaExceeded[];
  user: { limits: QuotaLimits; daily: PeriodUsage; monthly: PeriodUsage };
  tenant: { limits: QuotaLimits; daily: PeriodUsage; monthly: PeriodUsage } | null;
}

export interface SettleOutcome {
  /** The provider answered (2xx): one assistant response, counted as a request even without usage. */
  counted: boolean;
  /** Tokens read from the response; null when they could not be read. */
  usage: Usage | null;
}

export interface RecordedUsage {
  subject: QuotaSubject;
  usage: Pick<Usage, 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'totalTokens' | 'estimated'> & {
    model?: string;
  };
  /** Assistant responses this usage covers; default 1. */
  requests?: number;
  context?: UsageContext;
  at?: Date;
}

/** Every user's and tenant's quota standing in a scope (statusOfAll). */
export interface AllQuotaStatus {
  day: string;
  month: string;
  users: Array<{
    userId: number;
    username: string;
    tenantId: number | null;
    limits: QuotaLimits;
    daily: PeriodUsage;
    monthly: PeriodUsage;
    exceeded: QuotaExceeded[];
  }>;
  tenants: Array<{
    tenantId: number;
    name: string;
    limits: QuotaLimits;
    daily: PeriodUsage;
    monthly: PeriodUsage;
    exceeded: QuotaExceeded[];
  }>;
}

/** The quota could not be checked (database unreachable, ...): the caller must refuse. */
export class QuotaCheckError extends Error {
  override name = 'QuotaCheckError';
}

export interface QuotaDeps {
  database: DatabaseHandle;
  now: () => Date;
  logger?: Logger;
}

/** What every part of one quota service shares. */
export interface QuotaCore {
  deps: QuotaDeps;
  repo: QuotaUsageRepository;
  /** PostgreSQL: a group is a set of atomic statements in parallel (SQLite: one transaction). */
  pg: boolean;
  /** The period keys of a moment; the last day's are kept (every call of a day asks for them). */
  periodsOf(at: Date): Periods;
}

export function periodCache(): (at: Date) => Periods {
  let lastDay: { from: number; to: number; periods: Periods } | undefined;
  return (at: Date): Periods => {
    const t = at.getTime();
    if (lastDay !== undefined && t >= lastDay.from && t < lastDay.to) return lastDay.periods;
    const month = monthKey(at);
    const periods = { day: dayKey(at), month, monthStart: month, nextMonthStart: nextMonthKey(at) };
    const from = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    lastDay = { from, to: from + 86_400_000, periods };
    return periods;
  };
}

/**
 * Runs a single-statement write again when PostgreSQL aborted it as a deadlock victim (40P01) or a
 * serialization failure (40001): the statement is atomic, so nothing of it was applied.
 */
export async function retryDeadlock<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (i >= attempts || (code !== '40P01' && code !== '40001')) throw error;
    }
  }
}

/** An error's class, code and message, shortened. */
export function errorSummary(error: unknown): string {
  if (error instanceof Error) {
    // Quota SQL carries ids, dates and counts only, so the message is safe to log.
    const code = (error as { code?: unknown }).code;
    return `${error.name}${code ? ` ${String(code)}` : ''}: ${error.message.slice(0, 200)}`;
  }
  return 'unknown error';
}
