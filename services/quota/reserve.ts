// Reservations (the `reserve` half of the protocol in services/quota.ts): the statements of one
// reservation on a given connection, and reservations grouped per subject. A reservation takes one
// request (and `ask.tokens`) from the user's daily and monthly rows and the tenant's row of the day,
// only while every limit of those rows has room; whatever half was taken is given back when the
// other half was refused or failed, so a refused reservation leaves nothing reserved.
//
// Several calls of one subject, ask and day in the same group: one UPDATE takes all of them when the
// quota has room for all; otherwise they are tried one by one, so exactly as many as fit get through.
// PostgreSQL with a tenant: the user and tenant halves are one statement (atomic: nothing to give
// back if it fails), retried when PostgreSQL picked it as a deadlock victim.
import type { RawSql } from '../../db/client.ts';
import type { SettleDelta, UserPeriods } from '../../db/repositories/quota-usage.ts';
import type { QuotaAsk } from '../../domain/quota.ts';
import { statusOf } from './status.ts';
import {
  type Periods,
  type QuotaCore,
  type QuotaSubject,
  type ReserveResult,
  retryDeadlock,
} from './types.ts';

const MAX_ENSURED_KEYS = 50_000;

/** An ask that needs more room than it takes (a lease: services/quota/leases.ts). */
type LeaseAsk = QuotaAsk & { need?: QuotaAsk };

/** A reservation waiting for its group; `result` or `error` is set when the group was written. */
export interface PendingReserve {
  subject: QuotaSubject;
  ask: QuotaAsk;
  at: Date;
  result?: ReserveResult;
  error?: unknown;
  resolve(r: ReserveResult): void;
  reject(e: unknown): void;
}

export function reservations(core: QuotaCore) {
  const { repo, pg, periodsOf } = core;
  /** Rows known to exist (created or seen by this process), so the hot path skips the insert. */
  const ensured = new Set<string>();

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
    // A lease (services/quota/leases.ts) asks for more room than it takes; every other ask needs its own.
    const need = (ask as LeaseAsk).need ?? {
      tokens: Math.max(ask.tokens, 1),
      requests: Math.max(ask.requests, 1),
    };
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
      const now = await statusOf(core, subject, ask, at, db);
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
      const lease = (r.ask as LeaseAsk).need === undefined ? '' : ':lease';
      const key = `${r.subject.userId}:${r.subject.tenantId}:${r.ask.tokens}:${r.ask.requests}:${periodsOf(r.at).day}${lease}`;
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

  return {
    ensureRows,
    reserveOn,
    /** Writes the group's reservations, bucket by bucket (each sets its reservations' result or error). */
    async reserveAll(db: RawSql, reserves: PendingReserve[]): Promise<void> {
      for (const bucket of sameSubject(reserves)) await reserveBucket(db, bucket);
    },
    /** The same, every bucket at once (PostgreSQL: statements in parallel on the pool). */
    reserveAllInParallel(db: RawSql, reserves: PendingReserve[]): Promise<void>[] {
      return sameSubject(reserves).map((bucket) => reserveBucket(db, bucket));
    },
  };
}

export type Reservations = ReturnType<typeof reservations>;
