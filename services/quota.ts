// The one usage accounting shared by local and remote sessions (spec rule 5): quota checks, the
// reserve / settle protocol the model proxy uses, and recording of usage that did not pass through
// the proxy. Other parts of the service get the same instance with `quotaServiceFor(deps)`.
//
// Protocol for a metered call:
//   reserve(subject)  before forwarding: one conditional UPDATE on the user's daily+monthly rows and
//                     one on the tenant's row of the day; each takes one request (and `ask.tokens`)
//                     only while every limit of its rows has room. Refused -> nothing stays reserved.
//   settle(r, out)    when the response is over: adds the request (if the provider answered) and its
//                     tokens to the used counters and takes the reservation back. Settling twice is a
//                     no-op.
// Because a request is taken at reserve time, concurrent requests can never pass a request limit,
// and pass a token limit by at most the tokens of the requests in flight (tokens are only known at
// the end); a call counts as in flight until its settle is written.
//
// Writes are grouped per turn of the event loop: the settles and reservations that arrive in one
// turn are written together at its end (setImmediate); reservations of the same user, tenant and day
// take their requests in one UPDATE when the quota has room for all of them, else one by one, so
// exactly as many as fit get through.
// - SQLite (in-process; a write transaction's commit costs more than its statements): a group is ONE
//   transaction, settles first, so a reservation sees every settle before it; its answer is given
//   after the commit. A settle alone waits up to SETTLE_DELAY_MS to ride along with the next
//   reservation's transaction.
// - PostgreSQL (a round trip per statement, several API instances): a group is a set of single,
//   atomic statements run in parallel on the pool (user and tenant halves in one statement, rows
//   locked in one fixed order); no transaction holds the hot rows' locks across round trips.
// Reporting tables (daily_usage, session totals, tenants.total_tokens_used) guard nothing, so their
// increments are merged in memory and written every FLUSH_INTERVAL_MS (flush() forces it). The
// message rows of proxied calls (services/usage/remote-messages.ts) are written after this flush and
// add none of these figures again.
//
// Failure: a reservation that cannot be made throws QuotaCheckError and the caller refuses the call
// (fail closed). A settle that fails is retried in the background; until it succeeds its reservation
// keeps counting against the quota (conservative, never an overshoot).
import type { Logger } from 'pino';
import type { DatabaseHandle, RawSql } from '../db/client.ts';
import {
  type DailyUsageDelta,
  type QuotaUsageRepository,
  quotaUsageRepository,
  type SessionTotalsDelta,
  type SettleDelta,
  type TenantPeriods,
  type UserPeriods,
} from '../db/repositories/quota-usage.ts';
import { ingestRepository } from '../db/repositories/usage/ingest.ts';
import { rawScopeCondition } from '../db/tenant-scope-sql.ts';
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
import type { ReadScope } from '../domain/tenant-scope.ts';
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

type Periods = UserPeriods & TenantPeriods;

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

/** The quota could not be checked (database unreachable, ...): the caller must refuse. */
export class QuotaCheckError extends Error {
  override name = 'QuotaCheckError';
}

const FLUSH_INTERVAL_MS = 50;
const SETTLE_RETRY_MS = 1_000;
const SETTLE_DELAY_MS = 5;
const MAX_ENSURED_KEYS = 50_000;

/** A settle of both of a user's rows and (optionally) the tenant's row of the day. */
interface SettleWork {
  subject: QuotaSubject;
  periods: Periods;
  delta: SettleDelta;
  at: Date;
}

interface PendingReserve {
  subject: QuotaSubject;
  ask: QuotaAsk;
  at: Date;
  result?: ReserveResult;
  error?: unknown;
  resolve(r: ReserveResult): void;
  reject(e: unknown): void;
}

export function quotaService(deps: { database: DatabaseHandle; now: () => Date; logger?: Logger }) {
  const repo: QuotaUsageRepository = quotaUsageRepository(deps.database);
  const pg = deps.database.dialect === 'postgres';
  /** SQLite: a group is one transaction. PostgreSQL: a group is a set of atomic statements in parallel. */
  const inTransaction = !pg;
  /** Rows known to exist (created or seen by this process), so the hot path skips the insert. */
  const ensured = new Set<string>();
  const dailyUsage = new Map<string, DailyUsageDelta>();
  const sessionTotals = new Map<string, SessionTotalsDelta>();
  /** tenants.total_tokens_used increments per tenant. */
  const tenantTokens = new Map<number, number>();
  let reportTimer: NodeJS.Timeout | undefined;
  let reporting: Promise<void> | undefined;

  /** The period keys of a moment; the last day's are kept (every call of a day asks for them). */
  let lastDay: { from: number; to: number; periods: Periods } | undefined;
  const periodsOf = (at: Date): Periods => {
    const t = at.getTime();
    if (lastDay !== undefined && t >= lastDay.from && t < lastDay.to) return lastDay.periods;
    const month = monthKey(at);
    const periods = { day: dayKey(at), month, monthStart: month, nextMonthStart: nextMonthKey(at) };
    const from = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    lastDay = { from, to: from + 86_400_000, periods };
    return periods;
  };

  // ---- the statements of one reservation, on a given connection ----

  async function ensureRows(subject: QuotaSubject, p: UserPeriods, at: Date, db: RawSql): Promise<void> {
    const userKey = `u:${subject.userId}:${p.day}`;
    const tenantKey = `t:${subject.tenantId}:${p.day}`;
    const needUser = !ensured.has(userKey);
    const needTenant = subject.tenantId !== null && !ensured.has(tenantKey);
    if (!needUser && !needTenant) return;
    const firstToday = needUser ? await repo.ensureUserRows(subject.userId, p, at, db) : false;
    if (subject.tenantId !== null && (needTenant || firstToday))
      await repo.ensureTenantRow(subject.tenantId, p.day, firstToday, db);
    if (ensured.size > MAX_ENSURED_KEYS) ensured.clear();
    ensured.add(userKey);
    if (subject.tenantId !== null) ensured.add(tenantKey);
  }

  async function tryReserve(subject: QuotaSubject, p: Periods, ask: QuotaAsk, at: Date, db: RawSql) {
    const take = { tokens: ask.tokens, requests: ask.requests };
    const need = { tokens: Math.max(ask.tokens, 1), requests: Math.max(ask.requests, 1) };
    // PostgreSQL: one statement (a statement is atomic: nothing to give back if it fails).
    if (pg && subject.tenantId !== null) {
      const tenantId = subject.tenantId;
      return retryDeadlock(() => repo.reserveBoth(subject.userId, tenantId, p, take, need, at));
    }
    const [user, tenant] = await Promise.allSettled([
      repo.reserveUser(subject.userId, p, take, need, at, db),
      subject.tenantId === null ? true : repo.reserveTenant(subject.tenantId, p, take, need, db),
    ]);
    if (user.status === 'fulfilled' && tenant.status === 'fulfilled')
      return { user: user.value, tenant: tenant.value };
    // One half failed: give the other half back (best effort) before reporting the failure.
    await giveBack(
      subject,
      p,
      ask,
      at,
      db,
      user.status === 'fulfilled' ? user.value : [],
      tenant.status === 'fulfilled' && tenant.value,
    ).catch(() => undefined);
    throw user.status === 'rejected' ? user.reason : (tenant as PromiseRejectedResult).reason;
  }

  /** Releases the parts of a reservation that were taken. */
  async function giveBack(
    subject: QuotaSubject,
    p: Periods,
    ask: QuotaAsk,
    at: Date,
    db: RawSql,
    userPeriods: Array<'daily' | 'monthly'>,
    tenant: boolean,
  ): Promise<void> {
    const back: SettleDelta = {
      tokens: 0,
      requests: 0,
      releaseTokens: ask.tokens,
      releaseRequests: ask.requests,
    };
    await Promise.all([
      userPeriods.length === 0
        ? undefined
        : repo.settleUser(
            subject.userId,
            {
              day: userPeriods.includes('daily') ? p.day : undefined,
              month: userPeriods.includes('monthly') ? p.month : undefined,
            },
            back,
            at,
            db,
          ),
      tenant && subject.tenantId !== null ? repo.settleTenant(subject.tenantId, p.day, back, db) : undefined,
    ]);
  }

  async function status(subject: QuotaSubject, ask: QuotaAsk, at: Date, db: RawSql): Promise<QuotaStatus> {
    const p = periodsOf(at);
    const [u, t] = await Promise.all([
      repo.readUser(subject.userId, p, db),
      subject.tenantId === null ? undefined : repo.readTenant(subject.tenantId, p, db),
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

  /** One reservation, start to finish; throws on a database failure. */
  async function reserveOn(
    db: RawSql,
    subject: QuotaSubject,
    ask: QuotaAsk,
    at: Date,
  ): Promise<ReserveResult> {
    const p = periodsOf(at);
    for (let attempt = 0; attempt < 2; attempt++) {
      await ensureRows(subject, p, at, db);
      const got = await tryReserve(subject, p, ask, at, db);
      if (got.user.length === 2 && got.tenant) {
        return {
          ok: true,
          reservation: { subject, periods: p, tokens: ask.tokens, requests: ask.requests, settled: false },
        };
      }
      // Give back the part that was taken, then find out why.
      await giveBack(subject, p, ask, at, db, got.user, got.tenant && subject.tenantId !== null);
      const now = await status(subject, ask, at, db);
      if (now.exceeded.length > 0) return { ok: false, exceeded: now.exceeded };
      // No limit is exhausted: a row was missing (deleted, or not created by this process), or a
      // concurrent request released in between. Make sure the rows exist and try once more.
      ensured.delete(`u:${subject.userId}:${p.day}`);
      ensured.delete(`t:${subject.tenantId}:${p.day}`);
    }
    return {
      ok: false,
      exceeded: [{ scope: 'user', period: 'daily', measure: 'requests', current: 0, limit: 0 }],
    };
  }

  async function settleOn(db: RawSql, w: SettleWork): Promise<void> {
    const { subject: s, periods: p } = w;
    if (pg && s.tenantId !== null) {
      const tenantId = s.tenantId;
      return retryDeadlock(() => repo.settleBoth(s.userId, tenantId, p, w.delta, w.at));
    }
    await Promise.all([
      repo.settleUser(s.userId, { day: p.day, month: p.month }, w.delta, w.at, db),
      s.tenantId === null ? undefined : repo.settleTenant(s.tenantId, p.day, w.delta, db),
    ]);
  }

  // ---- SQLite: group commit ----

  /** Settles waiting for the next group, merged per (user, tenant, day). */
  const pendingSettles = new Map<string, SettleWork>();
  const pendingReserves: PendingReserve[] = [];
  let nextGroup: { promise: Promise<void>; done: () => void; timer: NodeJS.Timeout | undefined } | undefined;
  let retryTimer: NodeJS.Timeout | undefined;

  function queueSettle(w: SettleWork) {
    const key = `${w.subject.userId}:${w.subject.tenantId}:${w.periods.day}`;
    const have = pendingSettles.get(key);
    if (have === undefined) {
      pendingSettles.set(key, { ...w, delta: { ...w.delta } });
      return;
    }
    have.delta.tokens += w.delta.tokens;
    have.delta.requests += w.delta.requests;
    have.delta.releaseTokens += w.delta.releaseTokens;
    have.delta.releaseRequests += w.delta.releaseRequests;
    have.at = w.at;
  }

  /**
   * The group the queued work will be written in; resolves after its commit. A reservation (or a
   * reader) needs it now: at the end of this turn of the event loop. Settles alone can wait
   * SETTLE_DELAY_MS, so that under light load they ride along with the next reservation's
   * transaction instead of paying a commit of their own (every reservation applies them first).
   */
  function group(urgent: boolean): Promise<void> {
    if (nextGroup === undefined) {
      let done!: () => void;
      const promise = new Promise<void>((resolve) => {
        done = resolve;
      });
      nextGroup = { promise, done, timer: undefined };
      if (urgent) setImmediate(runGroup);
      else nextGroup.timer = setTimeout(runGroup, SETTLE_DELAY_MS);
    } else if (urgent && nextGroup.timer !== undefined) {
      clearTimeout(nextGroup.timer);
      nextGroup.timer = undefined;
      setImmediate(runGroup);
    }
    return nextGroup.promise;
  }

  async function runGroup(): Promise<void> {
    const mine = nextGroup;
    if (mine === undefined) return;
    nextGroup = undefined;
    const settles = [...pendingSettles.values()];
    pendingSettles.clear();
    const reserves = pendingReserves.splice(0);
    try {
      if (inTransaction) await writeGroupInTransaction(settles, reserves);
      else await writeGroupInParallel(settles, reserves);
    } finally {
      for (const r of reserves) {
        if (r.result) r.resolve(r.result);
        else r.reject(r.error ?? new Error('reservation not made'));
      }
      mine.done();
    }
  }

  /** SQLite: the group in one transaction, settles first. All or nothing. */
  async function writeGroupInTransaction(settles: SettleWork[], reserves: PendingReserve[]): Promise<void> {
    try {
      await deps.database.transaction(async ({ sql }) => {
        for (const w of settles) await settleOn(sql, w);
        for (const bucket of sameSubject(reserves)) await reserveBucket(sql, bucket);
      });
    } catch (error) {
      // Nothing of the group was written: the reservations are refused, the settles wait for a retry.
      for (const r of reserves) {
        r.result = undefined;
        r.error = error;
      }
      settlesFailed(settles, error);
    }
  }

  /**
   * PostgreSQL: every statement is atomic by itself, so the group's statements run in parallel on
   * the pool, without a transaction around them (which would hold the hot rows' locks across round
   * trips). A settle and a reservation of the same group do not wait for each other: until its
   * settle commits, a call counts as in flight.
   */
  async function writeGroupInParallel(settles: SettleWork[], reserves: PendingReserve[]): Promise<void> {
    const sql = deps.database.sql;
    await Promise.all([
      ...settles.map((w) => settleOn(sql, w).catch((error: unknown) => settlesFailed([w], error))),
      ...sameSubject(reserves).map((bucket) => reserveBucket(sql, bucket)),
    ]);
  }

  function settlesFailed(settles: SettleWork[], error: unknown) {
    if (settles.length === 0) return;
    for (const w of settles) queueSettle(w);
    deps.logger?.error({ err: errorSummary(error) }, 'quota: writing settles failed; will retry');
    if (retryTimer !== undefined) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void group(false);
    }, SETTLE_RETRY_MS).unref();
  }

  /**
   * Several calls of one subject in a group: one reservation for all of them when the quota has
   * room for all; otherwise one by one, so exactly as many as fit get through.
   */
  async function reserveBucket(db: RawSql, bucket: PendingReserve[]): Promise<void> {
    if (bucket.length > 1) {
      try {
        if (await reserveMany(db, bucket)) return;
      } catch (error) {
        for (const r of bucket) r.error = error;
        return;
      }
    }
    for (const r of bucket) {
      try {
        r.result = await reserveOn(db, r.subject, r.ask, r.at);
      } catch (error) {
        r.error = error;
      }
    }
  }

  /** Reservations grouped by subject, ask and day, in arrival order. */
  function sameSubject(reserves: PendingReserve[]): PendingReserve[][] {
    if (reserves.length === 1) return [reserves];
    const buckets = new Map<string, PendingReserve[]>();
    for (const r of reserves) {
      const key = `${r.subject.userId}:${r.subject.tenantId}:${r.ask.tokens}:${r.ask.requests}:${periodsOf(r.at).day}`;
      const b = buckets.get(key);
      if (b === undefined) buckets.set(key, [r]);
      else b.push(r);
    }
    return [...buckets.values()];
  }

  /** All of a bucket at once, or nothing (and false). */
  async function reserveMany(db: RawSql, bucket: PendingReserve[]): Promise<boolean> {
    const { subject, ask, at } = bucket[0]!;
    const p = periodsOf(at);
    const all: QuotaAsk = { tokens: ask.tokens * bucket.length, requests: ask.requests * bucket.length };
    await ensureRows(subject, p, at, db);
    const got = await tryReserve(subject, p, all, at, db);
    if (got.user.length === 2 && got.tenant) {
      for (const r of bucket) {
        r.result = {
          ok: true,
          reservation: {
            subject: r.subject,
            periods: p,
            tokens: ask.tokens,
            requests: ask.requests,
            settled: false,
          },
        };
      }
      return true;
    }
    await giveBack(subject, p, all, at, db, got.user, got.tenant && subject.tenantId !== null);
    return false;
  }

  // ---- the reporting rows ----

  function scheduleReport() {
    if (reportTimer !== undefined) return;
    reportTimer = setTimeout(() => {
      reportTimer = undefined;
      void flush();
    }, FLUSH_INTERVAL_MS).unref();
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
          estimatedTokens: 0,
          requests: 0,
          models: [],
        };
        dailyUsage.set(key, d);
      }
      d.tokens += tokens;
      d.inputTokens += usage?.inputTokens ?? 0;
      d.outputTokens += usage?.outputTokens ?? 0;
      d.cacheTokens += usage?.cacheReadTokens ?? 0;
      if (usage?.estimated) d.estimatedTokens += tokens;
      d.requests += requests;
      if (usage?.model && !d.models.includes(usage.model)) d.models.push(usage.model);
      if (tokens !== 0)
        tenantTokens.set(subject.tenantId, (tenantTokens.get(subject.tenantId) ?? 0) + tokens);
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
    scheduleReport();
  }

  /** Writes the merged reporting rows now (and waits for queued settles). */
  async function flush(): Promise<void> {
    if (pendingSettles.size > 0 || nextGroup) await group(true);
    while (reporting) await reporting;
    if (dailyUsage.size === 0 && sessionTotals.size === 0 && tenantTokens.size === 0) return;
    const daily = [...dailyUsage.values()];
    const sessions = [...sessionTotals.values()];
    const tenants = [...tenantTokens.entries()].sort(([a], [b]) => a - b);
    dailyUsage.clear();
    sessionTotals.clear();
    tenantTokens.clear();
    const at = deps.now();
    const write = async (db: RawSql) => {
      for (const d of daily) await repo.addDailyUsage(d, db);
      for (const s of sessions) await repo.addSessionTotals(s, at, db);
      const totals = ingestRepository(db);
      for (const [tenantId, tokens] of tenants) await totals.addTenantTokens({ tenantId, tokens });
    };
    reporting = (
      inTransaction ? deps.database.transaction(({ sql }) => write(sql)) : write(deps.database.sql)
    ).catch((error) =>
      deps.logger?.error(
        { err: errorSummary(error), rows: daily.length + sessions.length + tenants.length },
        'quota: usage report rows could not be written',
      ),
    );
    try {
      await reporting;
    } finally {
      reporting = undefined;
    }
  }

  // ---- the API ----

  /**
   * Ends a reservation: adds the request and its tokens when counted, and takes the reservation back.
   * Never throws; a failed write is retried in the background. Resolves once written.
   */
  async function settle(r: Reservation, outcome: SettleOutcome, context?: UsageContext): Promise<void> {
    if (r.settled) return;
    r.settled = true;
    const tokens = outcome.counted ? (outcome.usage?.totalTokens ?? 0) : 0;
    const requests = outcome.counted ? r.requests : 0;
    const work: SettleWork = {
      subject: r.subject,
      periods: r.periods,
      delta: { tokens, requests, releaseTokens: r.tokens, releaseRequests: r.requests },
      at: deps.now(),
    };
    // Queued before the write, so that whoever sees the settled counters can flush the report too.
    if (outcome.counted) queueReport(r.subject, outcome.usage, requests, context, r.periods);
    queueSettle(work);
    // SQLite: a settle alone waits for the next reservation's transaction (or SETTLE_DELAY_MS).
    // PostgreSQL: written at once (measured: delaying it made sequential calls slower there).
    await group(pg);
  }

  return {
    /**
     * Takes `ask` (default: one request of unknown size) from the subject's quotas if every limit has
     * room. Throws QuotaCheckError when the check cannot be made.
     */
    async reserve(subject: QuotaSubject, ask: QuotaAsk = ONE_REQUEST): Promise<ReserveResult> {
      const at = deps.now();
      try {
        const answer = new Promise<ReserveResult>((resolve, reject) =>
          pendingReserves.push({ subject, ask, at, resolve, reject }),
        );
        void group(true);
        return await answer;
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
    },

    settle,

    /** Gives a reservation back without counting anything (the call was never answered). */
    release(r: Reservation): Promise<void> {
      return settle(r, { counted: false, usage: null });
    },

    /** Read-only: whether `ask` fits every limit now, with the figures. Throws QuotaCheckError. */
    async checkQuota(subject: QuotaSubject, ask: QuotaAsk = ONE_REQUEST): Promise<QuotaStatus> {
      try {
        if (pendingSettles.size > 0 || nextGroup) await group(true);
        return await status(subject, ask, deps.now(), deps.database.sql);
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
    },

    /** Records usage that did not pass through the proxy (local sessions, agent reports). */
    async recordUsage(entry: RecordedUsage): Promise<void> {
      const at = entry.at ?? deps.now();
      const periods = periodsOf(at);
      const requests = entry.requests ?? 1;
      await ensureRows(entry.subject, periods, at, deps.database.sql);
      const work: SettleWork = {
        subject: entry.subject,
        periods,
        delta: { tokens: entry.usage.totalTokens, requests, releaseTokens: 0, releaseRequests: 0 },
        at,
      };
      queueReport(entry.subject, entry.usage, requests, entry.context, periods);
      queueSettle(work);
      await group(true);
    },

    flush,

    /**
     * Read-only: every live user's and tenant's use against their limits inside a read scope, for the
     * day and month of `at` (GET /api/quota/status/all, /api/admin/quota/usage, the enforcement tick).
     * `exceeded` is judged like checkQuota's (room for one more request). Throws QuotaCheckError.
     */
    async statusOfAll(scope: ReadScope, at: Date = deps.now()): Promise<AllQuotaStatus> {
      try {
        if (pendingSettles.size > 0 || nextGroup) await group(true);
        const p = periodsOf(at);
        const users = rawScopeCondition(scope, 'u.tenant_id');
        const tenants = rawScopeCondition(scope, 't.id');
        if (users === false || tenants === false)
          return { day: p.day, month: p.month, users: [], tenants: [] };
        const [u, t] = await Promise.all([repo.readAllUsers(p, users), repo.readAllTenants(p, tenants)]);
        return {
          day: p.day,
          month: p.month,
          users: u.map((r) => ({ ...r, exceeded: exceededDimensions('user', r.limits, r.daily, r.monthly) })),
          tenants: t.map(({ quota, ...r }) => {
            const limits = tenantQuotaLimits(quota);
            return { ...r, limits, exceeded: exceededDimensions('tenant', limits, r.daily, r.monthly) };
          }),
        };
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
    },
  };
}

export type QuotaService = ReturnType<typeof quotaService>;

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

const services = new WeakMap<DatabaseHandle, QuotaService>();

/** The process's quota service for this database (one instance, so merged writes are shared). */
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

/**
 * Runs a single-statement write again when PostgreSQL aborted it as a deadlock victim (40P01) or a
 * serialization failure (40001): the statement is atomic, so nothing of it was applied.
 */
async function retryDeadlock<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
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
function errorSummary(error: unknown): string {
  if (error instanceof Error) {
    // Quota SQL carries ids, dates and counts only, so the message is safe to log.
    const code = (error as { code?: unknown }).code;
    return `${error.name}${code ? ` ${String(code)}` : ''}: ${error.message.slice(0, 200)}`;
  }
  return 'unknown error';
}
