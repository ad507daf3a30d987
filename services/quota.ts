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
//
// The parts, each with its own explanation (services/quota/):
//   reserve.ts       the statements of a reservation, and reservations grouped per subject
//   settle.ts        the statements of a settle, the queue of settles and their retry
//   group-commit.ts  the group written at the end of each turn (one transaction | parallel statements)
//   reporting.ts     the merged reporting increments and their flush
//   status.ts        read-only standings (checkQuota, statusOfAll)
//   types.ts         the public types and shared helpers
// This file wires them into one service and re-exports every public name, so importers stay as they are.

import type { DatabaseHandle } from '../db/client.ts';
import { quotaUsageRepository } from '../db/repositories/quota-usage.ts';
import { ONE_REQUEST, type QuotaAsk } from '../domain/quota.ts';
import type { ReadScope } from '../domain/tenant-scope.ts';
import { groupCommit } from './quota/group-commit.ts';
import { isLeased, type LeaseSize, quotaLeases } from './quota/leases.ts';
import { reportingRows } from './quota/reporting.ts';
import { reservations } from './quota/reserve.ts';
import type { SettleWork } from './quota/settle.ts';
import { statusOf, statusOfAll } from './quota/status.ts';
import {
  type AllQuotaStatus,
  errorSummary,
  periodCache,
  QuotaCheckError,
  type QuotaCore,
  type QuotaDeps,
  type QuotaStatus,
  type QuotaSubject,
  type RecordedUsage,
  type Reservation,
  type ReserveResult,
  type SettleOutcome,
  type UsageContext,
} from './quota/types.ts';

export {
  type AllQuotaStatus,
  QuotaCheckError,
  type QuotaStatus,
  type QuotaSubject,
  type RecordedUsage,
  type Reservation,
  type ReserveResult,
  type SettleOutcome,
  type UsageContext,
} from './quota/types.ts';

export function quotaService(deps: QuotaDeps) {
  const core: QuotaCore = {
    deps,
    repo: quotaUsageRepository(deps.database),
    pg: deps.database.dialect === 'postgres',
    periodsOf: periodCache(),
  };
  const reserve = reservations(core);
  const commit = groupCommit(core, reserve);
  // Readers of the standing (checkQuota, statusOfAll) first take the leases' unused room back; the
  // reporting and message-row flushes do not (they run every few tens of milliseconds under load).
  const writePending = async () => {
    await leases.returnAll();
    await commit.writePending();
  };
  const report = reportingRows(core, () => commit.writePending());
  const leases = quotaLeases(core, {
    reserve: (subject, ask, at) => commit.reserve(subject, ask, at),
    settle: (work) => commit.settle(work, false),
  });

  /**
   * Ends a reservation: adds the request and its tokens when counted, and takes the reservation back.
   * Never throws; a failed write is retried in the background. Resolves once written.
   */
  async function settle(r: Reservation, outcome: SettleOutcome, context?: UsageContext): Promise<void> {
    if (r.settled) return;
    r.settled = true;
    if (isLeased(r)) {
      if (outcome.counted) report.queueReport(r.subject, outcome.usage, 1, context, r.periods);
      return leases.settle(r, outcome.counted, outcome.usage, deps.now());
    }
    const tokens = outcome.counted ? (outcome.usage?.totalTokens ?? 0) : 0;
    const requests = outcome.counted ? r.requests : 0;
    const work: SettleWork = {
      subject: r.subject,
      periods: r.periods,
      delta: { tokens, requests, releaseTokens: r.tokens, releaseRequests: r.requests },
      at: deps.now(),
    };
    // Queued before the write, so that whoever sees the settled counters can flush the report too.
    if (outcome.counted) report.queueReport(r.subject, outcome.usage, requests, context, r.periods);
    // SQLite: a settle alone waits for the next reservation's transaction (or SETTLE_DELAY_MS).
    // PostgreSQL: written at once (measured: delaying it made sequential calls slower there).
    await commit.settle(work, core.pg);
  }

  return {
    /**
     * Takes `ask` (default: one request of unknown size) from the subject's quotas if every limit has
     * room. Throws QuotaCheckError when the check cannot be made.
     */
    async reserve(subject: QuotaSubject, ask: QuotaAsk = ONE_REQUEST): Promise<ReserveResult> {
      const at = deps.now();
      try {
        return await commit.reserve(subject, ask, at);
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
    },

    /**
     * reserve() for one proxied call, taken from this instance's lease of `lease` requests and tokens
     * when the quota has room for several leases (services/quota/leases.ts); exact otherwise.
     * `lease.requests` 0: the plain reservation.
     */
    async reserveCall(subject: QuotaSubject, lease: LeaseSize): Promise<ReserveResult> {
      if (lease.requests <= 0) return this.reserve(subject);
      try {
        return await leases.reserve(subject, lease, deps.now());
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
        await writePending();
        return await statusOf(core, subject, ask, deps.now(), deps.database.sql);
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
    },

    /** Records usage that did not pass through the proxy (local sessions, agent reports). */
    async recordUsage(entry: RecordedUsage): Promise<void> {
      const at = entry.at ?? deps.now();
      const periods = core.periodsOf(at);
      const requests = entry.requests ?? 1;
      await reserve.ensureRows(entry.subject, periods, at, deps.database.sql);
      const work: SettleWork = {
        subject: entry.subject,
        periods,
        delta: { tokens: entry.usage.totalTokens, requests, releaseTokens: 0, releaseRequests: 0 },
        at,
      };
      report.queueReport(entry.subject, entry.usage, requests, entry.context, periods);
      await commit.settle(work, true);
    },

    /** Writes the merged reporting rows now (and waits for queued settles). Leases stay. */
    flush: report.flush,

    /** Gives back what this instance's quota leases hold unused (their calls in flight settle later). */
    returnLeases: (): Promise<void> => leases.returnAll(),

    /** What is not written yet: settles (queued or being written) and merged reporting rows. */
    pending(): { settles: number; reportRows: number } {
      return { settles: commit.pendingSettles(), reportRows: report.pendingRows() };
    },

    /** Quota leases this process holds now (services/quota/leases.ts). */
    leasesHeld: (): number => leases.held(),

    /** Shutdown: no more timer-driven writes (the settle retry, the report timer). flush() still works. */
    stopTimers(): void {
      report.stopTimer();
      commit.stopRetry();
      leases.stop();
    },

    /**
     * Read-only: every live user's and tenant's use against their limits inside a read scope, for the
     * day and month of `at` (GET /api/quota/status/all, /api/admin/quota/usage, the enforcement tick).
     * `exceeded` is judged like checkQuota's (room for one more request). Throws QuotaCheckError.
     */
    async statusOfAll(scope: ReadScope, at: Date = deps.now()): Promise<AllQuotaStatus> {
      try {
        await writePending();
        return await statusOfAll(core, scope, at);
      } catch (error) {
        throw new QuotaCheckError(`quota check failed: ${errorSummary(error)}`);
      }
    },
  };
}

export type QuotaService = ReturnType<typeof quotaService>;

const services = new WeakMap<DatabaseHandle, QuotaService>();

/** The process's quota service for this database (one instance, so merged writes are shared). */
export function quotaServiceFor(deps: QuotaDeps): QuotaService {
  let s = services.get(deps.database);
  if (!s) {
    s = quotaService(deps);
    services.set(deps.database, s);
  }
  return s;
}
