// Per-step usage of one session line (issue 13 item 5; spec document 2 "Autonomous workflow records":
// a milestone's phase_* usage comes from the proxy's accounting for that line during that step, never
// from the CLI's cumulative session totals).
//
// Source: the model proxy writes one `assistant` row of daily_messages (message_source `proxy`,
// agent_session_id = the line's session id) for every call the provider answered
// (services/usage/remote-messages.ts). A step's usage is the sum of the line's rows that no earlier
// step counted, found with a CURSOR: the highest daily_messages.id already counted on the line.
//
// Why a cursor and not a time window [step start, step end]:
//   - a row is written up to FLUSH_INTERVAL_MS (100 ms) after its call ended, and again RETRY_MS later
//     after a failed write, with the time the CALL ended as its timestamp; a window read at step end
//     misses a late row for ever (its timestamp lies in a window already read), while the cursor
//     counts it with the line's next step: never lost;
//   - timestamps come from the API instance's clock and the step bounds from the worker's: with
//     several machines, skew moves rows across a window edge; ids do not depend on any clock;
//   - each row is counted by exactly one step, because the next step starts from the cursor this step
//     returns (rows with id > cursor): never twice.
// What makes "id > cursor" safe: ids come from one sequence (serial / rowid) and a line has one CLI
// at a time. The count is read only after the CLI's whole process group is gone and the rows of its
// calls were flushed (settle(): the in-process queue is flushed, then the count is re-read until it
// stops changing), so no row of the step still waits for a smaller id when the cursor moves past it;
// a row that is written even later gets a larger id and goes to the next step.
// Without a cursor from the caller (first step on a line, or a caller that lost it) the step starts
// from the line's current highest id, read before the CLI starts.
import { and, eq, gt, max, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../../db/client.ts';
import { remoteMessagesFor } from '../usage/remote-messages.ts';

export interface LineUsage {
  total: number;
  input: number;
  output: number;
  requests: number;
}

export interface LineUsageWindow extends LineUsage {
  /** The highest daily_messages.id counted: the next step on the line starts after it. */
  cursor: number;
}

export const ZERO_USAGE: LineUsage = { total: 0, input: 0, output: 0, requests: 0 };

export const addUsage = (a: LineUsage, b: LineUsage): LineUsage => ({
  total: a.total + b.total,
  input: a.input + b.input,
  output: a.output + b.output,
  requests: a.requests + b.requests,
});

/** Re-reads until the figures stop changing, at most this long. */
const SETTLE_MAX_MS = 3000;
/** Pause between two reads (autonomous.runner_settle_poll_ms; tests shorten it). */
const SETTLE_STEP_MS = 250;

export function lineUsage(deps: { database: DatabaseHandle; now: () => Date; settleStepMs?: number }) {
  const { db, t } = deps.database;
  const m = t.dailyMessages;
  const ofLine = (sessionId: string) =>
    and(eq(m.agentSessionId, sessionId), eq(m.role, 'assistant'), eq(m.messageSource, 'proxy'));

  /** The line's current highest counted-row id (0 when the line has no row yet). */
  async function cursorNow(sessionId: string): Promise<number> {
    const [row] = await db
      .select({ id: max(m.id) })
      .from(m)
      .where(ofLine(sessionId));
    return Number(row?.id ?? 0);
  }

  /** Usage of the line's rows after `cursor`, and the new cursor. */
  async function since(sessionId: string, cursor: number): Promise<LineUsageWindow> {
    const [row] = await db
      .select({
        total: sql<number>`COALESCE(SUM(${m.tokensUsed}), 0)`,
        input: sql<number>`COALESCE(SUM(${m.inputTokens}), 0)`,
        output: sql<number>`COALESCE(SUM(${m.outputTokens}), 0)`,
        requests: sql<number>`COUNT(*)`,
        last: max(m.id),
      })
      .from(m)
      .where(and(ofLine(sessionId), gt(m.id, cursor)));
    return {
      total: Number(row?.total ?? 0),
      input: Number(row?.input ?? 0),
      output: Number(row?.output ?? 0),
      requests: Number(row?.requests ?? 0),
      cursor: Math.max(cursor, Number(row?.last ?? 0)),
    };
  }

  /**
   * Usage since `cursor`, read once the rows of calls that already ended are stored: flushes this
   * process's queue of proxied-call rows (the embedded mode serves the proxy in the worker's process),
   * then re-reads until two reads agree (another API instance flushes its own queue every 100 ms).
   */
  async function settle(sessionId: string, cursor: number): Promise<LineUsageWindow> {
    await remoteMessagesFor({ database: deps.database, now: deps.now })
      .flush()
      .catch(() => undefined);
    const deadline = Date.now() + SETTLE_MAX_MS;
    let last = await since(sessionId, cursor);
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, deps.settleStepMs ?? SETTLE_STEP_MS));
      const next = await since(sessionId, cursor);
      if (next.cursor === last.cursor && next.requests === last.requests) return next;
      last = next;
    }
    return last;
  }

  return { cursorNow, since, settle };
}

export const usageOf = ({ total, input, output, requests }: LineUsage): LineUsage => ({
  total,
  input,
  output,
  requests,
});
