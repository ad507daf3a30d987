// The one usage accounting shared by local and remote sessions (spec rule 5): quota checks, the
// reserve / settle protocol the model proxy uses, and recording of usage that did not pass through
// the proxy. Other parts of the service get the same instance with `quotaServiceFor(deps)`.
//
// Protocol for a metered call:
//   reserve(subject)  before forwarding: one conditional UPDATE on the user's daily+monthly rows and
//                     one on the tenant's row of the day; each takes one request (and `ask.tokens`)
//                     only while every limit of its rows has room. Refused -> nothing stays reserved.
//   settle(r, out)    when the response is over: adds the request (if the provider answered) and its
//                     tokens to the used counters and takes the reservation back, immediately, so the
//                     next check sees the tokens. Settling twice is a no-op.
// Reporting tables (daily_usage, session totals) guard nothing, so their increments are merged in
// memory and written in one go every FLUSH_INTERVAL_MS (flush() forces it).
//
// Failure: a reservation that cannot be made throws QuotaCheckError; callers refuse the call (fail
// closed). A settle that fails is retried by the flush loop; until it succeeds the reservation keeps
// counting against the quota (conservative, never an overshoot).
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/client.ts';
import {
  type DailyUsageDelta,
  type QuotaUsageRepository,
  quotaUsageRepository,
  type SessionTotalsDelta,
  type SettleDelta,
  type TenantPeriods,
  type UserPeriods,
} from '../db/repositories/quota-usage.ts';
import {
  dayKey,
  exceededDimensions,
  monthKey,
  nextMonthKey,
  ONE_REQUEST,
  type PeriodUsage,
  type QuotaAsk,
  type QuotaExceeded,
  type QuotaLimits,
  tenantQuotaLimits,
} from '../domain/quota.ts';
import type { Usage } from '../domain/usage/usage.ts';

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

export interface Reservation {
  readonly subject: QuotaSubject;
  readonly periods: UserPeriods & TenantPeriods;
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
  usage: Pick<Usage, 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'totalTokens'> & { model?: string };
  /** Assistant responses this usage covers; default 1. */
  requests?: number;
  context?: UsageContext;
  at?: Date;
}

/** The quota could not be checked (database unreachable, ...): the caller must refuse. */
export class QuotaCheckError extends Error {
  override name = 'QuotaCheckError';
}

const FLUSH_INTERVAL_MS = 50;
const MAX_SETTLE_ATTEMPTS = 20;
const MAX_ENSURED_KEYS = 50_000;

export function quotaService(deps: { database: DatabaseHandle; now: () => Date; logger?: Logger }) {
  const repo: QuotaUsageRepository = quotaUsageRepository(deps.database);
  /** Rows known to exist (created or seen by this process), so the hot path skips the insert. */
  const ensured = new Set<string>();
  const dailyUsage = new Map<string, DailyUsageDelta>();
  const sessionTotals = new Map<string, SessionTotalsDelta>();
  const failedSettles: Array<{ run: () => Promise<void>; attempts: number }> = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;

  const periodsOf = (at: Date): UserPeriods & TenantPeriods => {
    const day = dayKey(at);
    return { day, month: monthKey(at), monthStart: monthKey(at), nextMonthStart: nextMonthKey(at) };
  };

  async function ensureRows(subject: QuotaSubject, p: UserPeriods, at: Date): Promise<void> {
    const userKey = `u:${subject.userId}:${p.day}`;
    const tenantKey = `t:${subject.tenantId}:${p.day}`;
    const needUser = !ensured.has(userKey);
    const needTenant = subject.tenantId !== null && !ensured.has(tenantKey);
    if (!needUser && !needTenant) return;
    const firstToday = needUser ? await repo.ensureUserRows(subject.userId, p, at) : false;
    if (subject.tenantId !== null && (needTenant || firstToday))
      await repo.ensureTenantRow(subject.tenantId, p.day, firstToday);
    if (ensured.size > MAX_ENSURED_KEYS) ensured.clear();
    ensured.add(userKey);
    if (subject.tenantId !== null) ensured.add(tenantKey);
  }

  function forget(subject: QuotaSubject, p: UserPeriods) {
    ensured.delete(`u:${subject.userId}:${p.day}`);
    ensured.delete(`t:${subject.tenantId}:${p.day}`);
  }

  async function tryReserve(
    subject: QuotaSubject,
    p: UserPeriods & TenantPeriods,
    ask: QuotaAsk,
    at: Date,
  ): Promise<{ user: Array<'daily' | 'monthly'>; tenant: boolean }> {
    const reserve = { tokens: ask.tokens, requests: ask.requests };
    const need = { tokens: Math.max(ask.tokens, 1), requests: Math.max(ask.requests, 1) };
    const [user, tenant] = await Promise.all([
      repo.reserveUser(subject.userId, p, reserve, need, at),
      subject.tenantId === null ? true : repo.reserveTenant(subject.tenantId, p, reserve, need),
    ]);
    return { user, tenant };
  }

  async function status(subject: QuotaSubject, ask: QuotaAsk, at: Date): Promise<QuotaStatus> {
    const p = periodsOf(at);
    const [u, t] = await Promise.all([
      repo.readUser(subject.userId, p),
      subject.tenantId === null ? undefined : repo.readTenant(subject.tenantId, p),
    ]);
    const exceeded = exceededDimensions('user', u.limits, u.daily, u.monthly, ask);
    let tenant: QuotaStatus['tenant'] = null;
    if (t) {
      const limits = tenantQuotaLimits(t.quota);
      exceeded.push(...exceededDimensions('tenant', limits, t.daily, t.monthly, ask));
      tenant = { limits, daily: t.daily, monthly: t.monthly };
    }
    return {
      allowed: exceeded.length === 0,
      exceeded,
      user: { limits: u.limits, daily: u.daily, monthly: u.monthly },
      tenant,
    };
  }

  function scheduleFlush() {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, FLUSH_INTERVAL_MS);
    timer.unref();
  }

  function queueReport(
    subject: QuotaSubject,
    usage: RecordedUsage['usage'] | null,
    requests: number,
    ctx: UsageContext | undefined,
    p: UserPeriods,
  ) {
    if (!ctx) return;
    const tokens = usage?.totalTokens ?? 0;
    if (subject.tenantId !== null) {
      const key = `${subject.tenantId}\u0000${p.day}\u0000${ctx.toolName}\u0000${ctx.hostName}`;
      let d = dailyUsage.get(key);
      if (!d) {
        d = {
          tenantId: subject.tenantId,
          date: p.day,
          toolName: ctx.toolName,
          hostName: ctx.hostName,
          tokens: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheTokens: 0,
          requests: 0,
          models: [],
        };
        dailyUsage.set(key, d);
      }
      d.tokens += tokens;
      d.inputTokens += usage?.inputTokens ?? 0;
      d.outputTokens += usage?.outputTokens ?? 0;
      d.cacheTokens += usage?.cacheReadTokens ?? 0;
      d.requests += requests;
      if (usage?.model && !d.models.includes(usage.model)) d.models.push(usage.model);
    }
    if (ctx.sessionId) {
      let s = sessionTotals.get(ctx.sessionId);
      if (!s) {
        s = { sessionId: ctx.sessionId, tokens: 0, inputTokens: 0, outputTokens: 0, requests: 0 };
        sessionTotals.set(ctx.sessionId, s);
      }
      s.tokens += tokens;
      s.inputTokens += usage?.inputTokens ?? 0;
      s.outputTokens += usage?.outputTokens ?? 0;
      s.requests += requests;
    }
    scheduleFlush();
  }

  async function applySettle(r: Reservation, d: SettleDelta, at: Date) {
    const s = r.subject;
    const p = r.periods;
    await Promise.all([
      repo.settleUser(s.userId, { day: p.day, month: p.month }, d, at),
      s.tenantId === null ? undefined : repo.settleTenant(s.tenantId, p.day, d),
    ]);
  }

  async function flush(): Promise<void> {
    // One flush at a time; a flush asked for during another runs right after it.
    while (flushing) await flushing;
    if (dailyUsage.size === 0 && sessionTotals.size === 0 && failedSettles.length === 0) return;
    const daily = [...dailyUsage.values()];
    const sessions = [...sessionTotals.values()];
    const settles = failedSettles.splice(0);
    dailyUsage.clear();
    sessionTotals.clear();
    const at = deps.now();
    flushing = (async () => {
      for (const s of settles) {
        try {
          await s.run();
        } catch (error) {
          if (++s.attempts < MAX_SETTLE_ATTEMPTS) failedSettles.push(s);
          else deps.logger?.error({ err: errorSummary(error) }, 'quota: giving up settling a reservation');
        }
      }
      const writes = [
        ...daily.map((d) => () => repo.addDailyUsage(d)),
        ...sessions.map((s) => () => repo.addSessionTotals(s, at)),
      ];
      const results = await Promise.allSettled(writes.map((w) => w()));
      const failed = results.filter((r) => r.status === 'rejected');
      if (failed.length > 0) {
        deps.logger?.error(
          { err: errorSummary((failed[0] as PromiseRejectedResult).reason), failed: failed.length },
          'quota: usage report rows could not be written',
        );
      }
    })();
    try {
      await flushing;
    } finally {
      flushing = undefined;
      if (failedSettles.length > 0) scheduleFlush();
    }
  }

  /**
   * Ends a reservation: adds the request and its tokens when counted, and takes the reservation back.
   * Never throws; a failed write is retried in the background.
   */
  async function settle(r: Reservation, outcome: SettleOutcome, context?: UsageContext): Promise<void> {
    if (r.settled) return;
    r.settled = true;
    const tokens = outcome.counted ? (outcome.usage?.totalTokens ?? 0) : 0;
    const requests = outcome.counted ? r.requests : 0;
    const d: SettleDelta = { tokens, requests, releaseTokens: r.tokens, releaseRequests: r.requests };
    const at = deps.now();
    // Queued before the write, so that whoever sees the settled counters can flush the report too.
    if (outcome.counted) queueReport(r.subject, outcome.usage, requests, context, r.periods);
    try {
      await applySettle(r, d, at);
    } catch (error) {
      deps.logger?.error({ err: errorSummary(error) }, 'quota: settling a reservation failed; will retry');
      failedSettles.push({ run: () => applySettle(r, d, at), attempts: 1 });
      scheduleFlush();
    }
  }

  return {
    /**
     * Takes `ask` (default: one request of unknown size) from the subject's quotas if every limit has
     * room. Throws QuotaCheckError when the check cannot be made.
     */
    async reserve(subject: QuotaSubject, ask: QuotaAsk = ONE_REQUEST): Promise<ReserveResult> {
      const at = deps.now();
      const p = periodsOf(at);
      try {
        for (let attempt = 0; attempt < 2; attempt++) {
          await ensureRows(subject, p, at);
          const got = await tryReserve(subject, p, ask, at);
          if (got.user.length === 2 && got.tenant) {
            return {
              ok: true,
              reservation: {
                subject,
                periods: p,
                tokens: ask.tokens,
                requests: ask.requests,
                settled: false,
              },
            };
          }
          // Give back the part that was taken, then find out why.
          const back: SettleDelta = {
            tokens: 0,
            requests: 0,
            releaseTokens: ask.tokens,
            releaseRequests: ask.requests,
          };
          await Promise.all([
            got.user.length === 0
              ? undefined
              : repo.settleUser(
                  subject.userId,
                  {
                    day: got.user.includes('daily') ? p.day : undefined,
                    month: got.user.includes('monthly') ? p.month : undefined,
                  },
                  back,
                  at,
                ),
            got.tenant && subject.tenantId !== null
              ? repo.settleTenant(subject.tenantId, p.day, back)
              : undefined,
          ]);
          const now = await status(subject, ask, at);
          if (now.exceeded.length > 0) return { ok: false, exceeded: now.exceeded };
          // No limit is exhausted: a row was missing (deleted, or created by another process for an
          // earlier day), or a concurrent request released in between. Make sure and try once more.
          forget(subject, p);
        }
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
      return {
        ok: false,
        exceeded: [{ scope: 'user', period: 'daily', measure: 'requests', current: 0, limit: 0 }],
      };
    },

    settle,

    /** Gives a reservation back without counting anything (the call was never answered). */
    release(r: Reservation): Promise<void> {
      return settle(r, { counted: false, usage: null });
    },

    /** Read-only: whether `ask` fits every limit now, with the figures. Throws QuotaCheckError. */
    async checkQuota(subject: QuotaSubject, ask: QuotaAsk = ONE_REQUEST): Promise<QuotaStatus> {
      try {
        return await status(subject, ask, deps.now());
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
    },

    /** Records usage that did not pass through the proxy (local sessions, agent reports). */
    async recordUsage(entry: RecordedUsage): Promise<void> {
      const at = entry.at ?? deps.now();
      const p = periodsOf(at);
      const requests = entry.requests ?? 1;
      const d: SettleDelta = {
        tokens: entry.usage.totalTokens,
        requests,
        releaseTokens: 0,
        releaseRequests: 0,
      };
      await ensureRows(entry.subject, p, at);
      await Promise.all([
        repo.settleUser(entry.subject.userId, { day: p.day, month: p.month }, d, at),
        entry.subject.tenantId === null ? undefined : repo.settleTenant(entry.subject.tenantId, p.day, d),
      ]);
      queueReport(entry.subject, entry.usage, requests, entry.context, p);
    },

    /** Writes the merged reporting rows (and retries failed settles) now. */
    flush,
  };
}

export type QuotaService = ReturnType<typeof quotaService>;

const services = new WeakMap<DatabaseHandle, QuotaService>();

/** The process's quota service for this database (one instance, so merged reports are flushed once). */
export function quotaServiceFor(deps: {
  database: DatabaseHandle;
  now: () => Date;
  logger?: Logger;
}): QuotaService {
  let s = services.get(deps.database);
  if (!s) {
    s = quotaService(deps);
    services.set(deps.database, s);
  }
  return s;
}

/** An error's class, code and message, shortened. */
function errorSummary(error: unknown): string {
  if (error instanceof Error) {
    // Quota SQL carries ids, dates and counts only, so the message is safe to log.
    const code = (error as { code?: unknown }).code;
    return `${error.name}${code ? ` ${String(code)}` : ''}: ${error.message.slice(0, 200)}`;
  }
  return 'unknown error';
}
