// Per-instance quota leases: the model proxy's calls take their request from a budget this process
// reserved in the database beforehand, so a call costs no database statement before it is forwarded.
//
// A lease is an ordinary reservation of `requests` requests and `tokens` tokens for one (user, tenant,
// day), made with the same conditional statements as any reservation (services/quota/reserve.ts), but
// only granted while the quota has room for MARGIN times that much. So:
//   - Request limits stay exact: a leased request is reserved in the database, no other call or
//     instance can take it; a call takes one only while the lease has requests left.
//   - Token limits: a call starts from a lease only while the lease's tokens are not used up by the
//     calls that finished under it, so a limit is passed by at most the tokens of the calls in flight
//     (the same bound as without leases; tokens are only known at the end of a call).
//   - Near a limit (less room than MARGIN leases) no lease is granted and every call reserves exactly
//     as before, one statement each; so "exactly the quota gets through" holds at the limit.
//   - The price: requests and tokens leased but not yet used are held by this instance; others (other
//     users of the tenant, other instances) see them as reserved until the lease returns them: when it
//     is idle for IDLE_MS, older than MAX_AGE_MS, used up, or a reader of the standing asks
//     (checkQuota, statusOfAll, returnLeases).
// Settles of leased calls are queued in memory and written in batches (the settle queue merges them
// per user, tenant and day; services/quota/settle.ts): each adds the call's request and tokens to the
// used counters and takes its part of the lease's reservation back. A lease closes once its last call
// has settled: the unused rest of its reservation is given back in the same way.
// A crash loses the in-memory part: the lease's reservation stays counted as reserved for that day
// (conservative: never an overshoot) and the calls in flight go uncounted, as without leases.
import { type CacheInvalidation, watchInvalidations } from '../../db/invalidated-cache.ts';
import type { Usage } from '../../domain/usage/usage.ts';
import type { SettleWork } from './settle.ts';
import type { Periods, QuotaCore, QuotaSubject, Reservation, ReserveResult } from './types.ts';

/** A lease is granted only while the quota has room for this many leases. */
const MARGIN = 4;
const IDLE_MS = 250;
const MAX_AGE_MS = 2_000;
const SWEEP_MS = 100;
/** After a refused lease, the subject reserves call by call this long before asking again. */
const NO_LEASE_MS = 500;

export interface LeaseSize {
  requests: number;
  tokens: number;
}

interface Lease {
  key: string;
  subject: QuotaSubject;
  periods: Periods;
  size: LeaseSize;
  taken: number;
  inFlight: number;
  /** Tokens used by the calls that finished under this lease. */
  tokensUsed: number;
  /** What is still reserved in the database for this lease. */
  reservedRequests: number;
  reservedTokens: number;
  createdAt: number;
  lastUsedAt: number;
  closing: boolean;
}

/** A reservation handed out from a lease. */
export interface LeasedReservation extends Reservation {
  lease: Lease;
}

export function isLeased(r: Reservation): r is LeasedReservation {
  return (r as Partial<LeasedReservation>).lease !== undefined;
}

export function quotaLeases(
  core: QuotaCore,
  io: {
    /** A reservation through the group commit (exact path, and the lease's own reservation). */
    reserve(
      subject: QuotaSubject,
      ask: { tokens: number; requests: number; need?: LeaseSize },
      at: Date,
    ): Promise<ReserveResult>;
    /** Queues a settle for the next batch. */
    settle(work: SettleWork): Promise<void>;
  },
) {
  const leases = new Map<string, Lease>();
  const acquiring = new Map<string, Promise<Lease | undefined>>();
  const noLeaseUntil = new Map<string, number>();
  let sweeper: NodeJS.Timeout | undefined;
  /** Following the invalidations of db/invalidated-cache.ts, from the first lease on (see returnFor). */
  let unwatch: (() => void) | undefined;

  const keyOf = (s: QuotaSubject, day: string) => `${s.userId}:${s.tenantId}:${day}`;

  function takeFrom(lease: Lease, subject: QuotaSubject): LeasedReservation | undefined {
    if (lease.closing || lease.taken >= lease.size.requests || lease.tokensUsed >= lease.size.tokens)
      return undefined;
    lease.taken++;
    lease.inFlight++;
    lease.lastUsedAt = performance.now();
    return { subject, periods: lease.periods, tokens: 0, requests: 1, settled: false, lease };
  }

  async function acquire(
    subject: QuotaSubject,
    key: string,
    size: LeaseSize,
    at: Date,
  ): Promise<Lease | undefined> {
    const ask = {
      requests: size.requests,
      tokens: size.tokens,
      need: { requests: size.requests * MARGIN, tokens: size.tokens * MARGIN },
    };
    unwatch ??= watchInvalidations(core.deps.database, (scope) => void returnFor(scope));
    const r = await io.reserve(subject, ask, at);
    if (!r.ok) {
      noLeaseUntil.set(key, performance.now() + NO_LEASE_MS);
      return undefined;
    }
    const now = performance.now();
    const lease: Lease = {
      key,
      subject,
      periods: r.reservation.periods,
      size,
      taken: 0,
      inFlight: 0,
      tokensUsed: 0,
      reservedRequests: size.requests,
      reservedTokens: size.tokens,
      createdAt: now,
      lastUsedAt: now,
      closing: false,
    };
    leases.set(key, lease);
    startSweeper();
    return lease;
  }

  /** Gives back what the lease still holds (its calls have all settled) and forgets it. */
  function close(lease: Lease, at: Date): Promise<void> {
    lease.closing = true;
    if (leases.get(lease.key) === lease) leases.delete(lease.key);
    if (lease.reservedRequests === 0 && lease.reservedTokens === 0) return Promise.resolve();
    const work: SettleWork = {
      subject: lease.subject,
      periods: lease.periods,
      delta: {
        tokens: 0,
        requests: 0,
        releaseTokens: lease.reservedTokens,
        releaseRequests: lease.reservedRequests,
      },
      at,
    };
    lease.reservedRequests = 0;
    lease.reservedTokens = 0;
    return io.settle(work);
  }

  /** No more calls from this lease; it closes now, or when its last call in flight settles. */
  function retire(lease: Lease, at: Date, writes: Promise<void>[]) {
    lease.closing = true;
    leases.delete(lease.key);
    if (lease.inFlight === 0) writes.push(close(lease, at));
  }

  function startSweeper() {
    if (sweeper !== undefined) return;
    sweeper = setInterval(() => void sweep(false), SWEEP_MS).unref();
  }

  /** Closes leases that are idle, old or used up (`all`: every lease; those with calls in flight once they end). */
  function sweep(all: boolean): Promise<void> {
    const now = performance.now();
    const at = core.deps.now();
    const writes: Promise<void>[] = [];
    for (const lease of [...leases.values()]) {
      const done =
        all ||
        now - lease.lastUsedAt >= IDLE_MS ||
        now - lease.createdAt >= MAX_AGE_MS ||
        lease.taken >= lease.size.requests ||
        lease.tokensUsed >= lease.size.tokens;
      if (done) retire(lease, at, writes);
    }
    if (leases.size === 0 && sweeper !== undefined) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
    if (noLeaseUntil.size > 10_000) noLeaseUntil.clear();
    return Promise.all(writes).then(() => undefined);
  }

  /**
   * Returns the leases of one user or one tenant (or all): their quota or standing changed, so
   * their next call reserves against the database again. Called for every invalidation of
   * db/invalidated-cache.ts once this instance took a lease (an administrator's quota change on any
   * instance: db/repositories/users.ts setQuota, tenants.ts putQuota). Scopes of one login or remote
   * session hold no lease.
   */
  function returnFor(scope: CacheInvalidation): Promise<void> {
    if (scope === 'all') return sweep(true);
    const match =
      'userId' in scope
        ? (s: QuotaSubject) => s.userId === scope.userId
        : 'tenantId' in scope
          ? (s: QuotaSubject) => s.tenantId === scope.tenantId
          : undefined;
    if (match === undefined) return Promise.resolve();
    const at = core.deps.now();
    const writes: Promise<void>[] = [];
    for (const lease of [...leases.values()]) {
      if (match(lease.subject)) retire(lease, at, writes);
    }
    return Promise.all(writes).then(() => undefined);
  }

  return {
    /**
     * One request for a call: from this subject's lease when it has one with room, else a new lease
     * (one reservation statement shared by the calls that wait for it), else the exact reservation.
     */
    async reserve(subject: QuotaSubject, size: LeaseSize, at: Date): Promise<ReserveResult> {
      const day = core.periodsOf(at).day;
      const key = keyOf(subject, day);
      // More calls waiting than a lease holds: the ones left over wait for the next lease (a few rounds).
      for (let attempt = 0; attempt < 4; attempt++) {
        const lease = leases.get(key);
        if (lease !== undefined) {
          const r = takeFrom(lease, subject);
          if (r !== undefined) return { ok: true, reservation: r };
          // Used up: it closes when its last call settles; a new lease takes its place.
          lease.closing = true;
          leases.delete(key);
          if (lease.inFlight === 0) void close(lease, at);
        }
        const until = noLeaseUntil.get(key);
        if (until !== undefined && performance.now() < until) break;
        let pending = acquiring.get(key);
        if (pending === undefined) {
          pending = acquire(subject, key, size, at).finally(() => acquiring.delete(key));
          acquiring.set(key, pending);
        }
        const got = await pending;
        if (got === undefined) break;
        const r = takeFrom(got, subject);
        if (r !== undefined) return { ok: true, reservation: r };
      }
      return io.reserve(subject, { tokens: 0, requests: 1 }, at);
    },

    /** Ends a leased call: its request and tokens counted (when answered), its part of the lease given back. */
    settle(r: LeasedReservation, counted: boolean, usage: Usage | null, at: Date): Promise<void> {
      const lease = r.lease;
      const tokens = counted ? (usage?.totalTokens ?? 0) : 0;
      lease.inFlight--;
      lease.tokensUsed += tokens;
      const releaseTokens = Math.min(tokens, lease.reservedTokens);
      lease.reservedTokens -= releaseTokens;
      lease.reservedRequests -= 1;
      const work: SettleWork = {
        subject: lease.subject,
        periods: lease.periods,
        delta: { tokens, requests: counted ? 1 : 0, releaseTokens, releaseRequests: 1 },
        at,
      };
      const written = io.settle(work);
      if (lease.closing && lease.inFlight === 0)
        return Promise.all([written, close(lease, at)]).then(() => undefined);
      return written;
    },

    /** Returns every lease's unused part (readers want the database to show use, not leased room). */
    returnAll(): Promise<void> {
      return sweep(true);
    },

    /** Returns the leases of one user or one tenant (or all); see returnFor. */
    returnFor,

    /** Leases held now (tests, metrics). */
    held(): number {
      return leases.size;
    },

    stop() {
      unwatch?.();
      unwatch = undefined;
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
    },
  };
}

export type QuotaLeases = ReturnType<typeof quotaLeases>;
