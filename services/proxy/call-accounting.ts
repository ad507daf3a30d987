// What a finished proxied call leaves behind (issue 31 item 1): the proxy's onDone hands one compact
// fact here and goes on; nothing below does I/O on the serving thread's path.
//   - the quota settle (services/quota.ts): in memory for a leased call, and written with the next
//     group otherwise (the reservation was made before the call, on this thread, so the quota bounds
//     of the README hold: a limit is passed by at most the tokens of the calls in flight or queued);
//   - the assistant row of daily_messages (services/usage/remote-messages.ts), only when the provider
//     answered 2xx: queued in memory, written every FLUSH_INTERVAL_MS by the writer thread
//     (PostgreSQL; SQLite with SVC_PROXY_ACCOUNTING=thread) or on this thread (SQLite by default,
//     or after that thread died).
// What a crash loses is said there and in the README: the rows queued or in the batch being written.
import type { Usage } from '../../domain/usage/usage.ts';
import type { QuotaDeps } from '../quota/types.ts';
import { quotaServiceFor, type Reservation } from '../quota.ts';
import { remoteMessagesFor } from '../usage/remote-messages.ts';

/** One finished call, as the proxy knows it. */
export interface FinishedCall {
  reservation: Reservation;
  /** The provider answered 2xx: one request (spec rule 3) and, if any, its tokens. */
  counted: boolean;
  usage: Usage | null;
  /** Null for a call made with a personal gateway key (no session). */
  sessionId: string | null;
  toolName: string;
  hostName: string;
  userId: number;
  username: string | null;
  requestId: string;
  provider: string;
  endpoint: string;
  at: Date;
  /** `gateway` for a call made with a personal gateway key (its row's message_source). */
  source?: 'gateway';
}

type Deps = QuotaDeps & Parameters<typeof remoteMessagesFor>[0];

export function callAccounting(deps: Deps) {
  const quota = quotaServiceFor(deps);
  const messages = remoteMessagesFor(deps);
  return {
    finished(call: FinishedCall): void {
      const { reservation: r } = call;
      const where = { sessionId: call.sessionId, toolName: call.toolName, hostName: call.hostName };
      void quota.settle(r, { counted: call.counted, usage: call.usage }, where);
      if (!call.counted) return;
      messages.recordProxiedCall({
        ...where,
        userId: call.userId,
        tenantId: r.subject.tenantId,
        username: call.username,
        requestId: call.requestId,
        day: r.periods.day,
        at: call.at,
        usage: call.usage,
        provider: call.provider,
        endpoint: call.endpoint,
        ...(call.source ? { source: call.source } : {}),
      });
    },
  };
}
