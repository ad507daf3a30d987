// Group commit: the settles and reservations that arrive in one turn of the event loop are written
// together at its end (setImmediate).
// - SQLite (in-process; a write transaction's commit costs more than its statements): a group is ONE
//   transaction, settles first, so a reservation sees every settle before it; its answer is given
//   after the commit. A settle alone waits up to SETTLE_DELAY_MS to ride along with the next
//   reservation's transaction. All or nothing: when the transaction fails, the reservations are
//   refused (they throw) and the settles wait for their retry.
// - PostgreSQL (a round trip per statement, several API instances): a group is a set of single,
//   atomic statements run in parallel on the pool; no transaction holds the hot rows' locks across
//   round trips. A settle and a reservation of the same group do not wait for each other: until its
//   settle commits, a call counts as in flight.
import type { QuotaAsk } from '../../domain/quota.ts';
import type { PendingReserve, Reservations } from './reserve.ts';
import { type SettleQueue, type SettleWork, settleOn, settleQueue } from './settle.ts';
import type { QuotaCore, QuotaSubject, ReserveResult } from './types.ts';

const SETTLE_DELAY_MS = 5;

export function groupCommit(core: QuotaCore, reserve: Reservations) {
  const inTransaction = !core.pg;
  const settles: SettleQueue = settleQueue(core, () => void group(false));
  const pendingReserves: PendingReserve[] = [];
  let nextGroup: { promise: Promise<void>; done: () => void; timer: NodeJS.Timeout | undefined } | undefined;
  /** Settles taken by the group being written (for pending()). */
  let writingSettles = 0;

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
    const work = settles.take();
    const reserves = pendingReserves.splice(0);
    writingSettles += work.length;
    try {
      if (inTransaction) await writeGroupInTransaction(work, reserves);
      else await writeGroupInParallel(work, reserves);
    } finally {
      writingSettles -= work.length;
      for (const r of reserves) {
        if (r.result) r.resolve(r.result);
        else r.reject(r.error ?? new Error('reservation not made'));
      }
      mine.done();
    }
  }

  /** SQLite: the group in one transaction, settles first. All or nothing. */
  async function writeGroupInTransaction(work: SettleWork[], reserves: PendingReserve[]): Promise<void> {
    try {
      await core.deps.database.transaction(async ({ sql }) => {
        for (const w of work) await settleOn(core, sql, w);
        await reserve.reserveAll(sql, reserves);
      });
    } catch (error) {
      // Nothing of the group was written: the reservations are refused, the settles wait for a retry.
      for (const r of reserves) {
        r.result = undefined;
        r.error = error;
      }
      settles.failed(work, error);
    }
  }

  /** PostgreSQL: every statement is atomic by itself, so the group's statements run in parallel. */
  async function writeGroupInParallel(work: SettleWork[], reserves: PendingReserve[]): Promise<void> {
    const sql = core.deps.database.sql;
    await Promise.all([
      ...work.map((w) => settleOn(core, sql, w).catch((error: unknown) => settles.failed([w], error))),
      ...reserve.reserveAllInParallel(sql, reserves),
    ]);
  }

  return {
    /** Queues a reservation for the group at the end of this turn; resolves with its answer. */
    reserve(subject: QuotaSubject, ask: QuotaAsk, at: Date): Promise<ReserveResult> {
      const answer = new Promise<ReserveResult>((resolve, reject) =>
        pendingReserves.push({ subject, ask, at, resolve, reject }),
      );
      void group(true);
      return answer;
    },

    /** Queues a settle; `urgent` writes it at the end of this turn, else within SETTLE_DELAY_MS. */
    settle(work: SettleWork, urgent: boolean): Promise<void> {
      settles.queue(work);
      return group(urgent);
    },

    /** Waits until the settles queued so far are written (readers see every settle before them). */
    async writePending(): Promise<void> {
      if (settles.size > 0 || nextGroup) await group(true);
    },

    /** Settles not written yet (queued, or in the group being written). */
    pendingSettles(): number {
      return settles.size + writingSettles;
    },

    stopRetry: settles.stopRetry,
  };
}
