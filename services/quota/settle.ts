// Settles (the `settle` half of the protocol in services/quota.ts) and their retry. A settle adds the
// request (if the provider answered) and its tokens to the used counters of the user's daily and
// monthly rows and the tenant's row of the day, and takes the reservation back. Settles waiting for
// the next group are merged per (user, tenant, day): their deltas add up.
//
// Failure: a settle that fails is queued again and retried after SETTLE_RETRY_MS (one timer for all);
// until it succeeds its reservation keeps counting against the quota (conservative, never an
// overshoot).
import type { RawSql } from '../../db/client.ts';
import type { SettleDelta } from '../../db/repositories/quota-usage.ts';
import { errorSummary, type Periods, type QuotaCore, type QuotaSubject, retryDeadlock } from './types.ts';

const SETTLE_RETRY_MS = 1_000;

/** A settle of both of a user's rows and (optionally) the tenant's row of the day. */
export interface SettleWork {
  subject: QuotaSubject;
  periods: Periods;
  delta: SettleDelta;
  at: Date;
}

/** Writes one settle on a given connection. */
export async function settleOn(core: QuotaCore, db: RawSql, w: SettleWork): Promise<void> {
  const { subject: s, periods: p } = w;
  const { repo } = core;
  if (core.pg && s.tenantId !== null) {
    const tenantId = s.tenantId;
    return retryDeadlock(() => repo.settleBoth(s.userId, tenantId, p, w.delta, w.at));
  }
  await Promise.all([
    repo.settleUser(s.userId, { day: p.day, month: p.month }, w.delta, w.at, db),
    s.tenantId === null ? undefined : repo.settleTenant(s.tenantId, p.day, w.delta, db),
  ]);
}

/** The settles waiting for the next group; `retry` asks for a group after a failure. */
export function settleQueue(core: QuotaCore, retry: () => void) {
  const pending = new Map<string, SettleWork>();
  let retryTimer: NodeJS.Timeout | undefined;

  function queue(w: SettleWork) {
    const key = `${w.subject.userId}:${w.subject.tenantId}:${w.periods.day}`;
    const have = pending.get(key);
    if (have === undefined) {
      pending.set(key, { ...w, delta: { ...w.delta } });
      return;
    }
    have.delta.tokens += w.delta.tokens;
    have.delta.requests += w.delta.requests;
    have.delta.releaseTokens += w.delta.releaseTokens;
    have.delta.releaseRequests += w.delta.releaseRequests;
    have.at = w.at;
  }

  return {
    queue,

    get size(): number {
      return pending.size;
    },

    /** Everything queued, for the group being written. */
    take(): SettleWork[] {
      const settles = [...pending.values()];
      pending.clear();
      return settles;
    },

    /** The settles of a failed write: queued again, retried by the next group or after SETTLE_RETRY_MS. */
    failed(settles: SettleWork[], error: unknown) {
      if (settles.length === 0) return;
      for (const w of settles) queue(w);
      core.deps.logger?.error({ err: errorSummary(error) }, 'quota: writing settles failed; will retry');
      if (retryTimer !== undefined) return;
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        retry();
      }, SETTLE_RETRY_MS).unref();
    },

    /** Shutdown: no timer-driven retry any more. */
    stopRetry() {
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      retryTimer = undefined;
    },
  };
}

export type SettleQueue = ReturnType<typeof settleQueue>;
