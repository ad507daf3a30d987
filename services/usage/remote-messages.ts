// Remote work in the message tables (issue 10 item 1; spec document 2 rules 3 and 5): every model call
// the proxy forwarded and the provider answered (2xx) becomes one `assistant` row of daily_messages
// (one request = one assistant message), and every prompt a user sends to a remote session becomes one
// `user` row. Tool = the session's CLI tool id, host = the session's host (the machine's name), user
// and tenant = the session's. Both go through the ONE ingestion path (services/usage/ingest.ts) with
// `accounting: 'already-settled'`: the quota service already counted their tokens and requests
// (quota_usage, tenant_usage, daily_usage, the session's token and request totals,
// tenants.total_tokens_used), so only the message-derived tables are written here.
//
// Proxied calls: the proxy's onDone hands the call over with recordProxiedCall, which only pushes a
// row onto an in-memory queue (no I/O: the proxy's latency is untouched). The queue is written every
// FLUSH_INTERVAL_MS, after the quota service's own report flush (so daily_usage holds the day before
// usage_summary counts its days). message_id is drawn once per call (callMessageId), so a flush that
// is retried after a failure (or a partial one) inserts nothing twice (ON CONFLICT DO NOTHING).
// On PostgreSQL the queued rows are written by a worker thread with its own pool (message-writer-
// thread.ts: ~35-50 us of CPU per row off the thread that serves the proxy); on SQLite by that thread
// on its own WAL connection with SVC_PROXY_ACCOUNTING=thread (short slices: see message-writer-
// thread.ts); on SQLite by default, with SVC_USAGE_WRITER_THREAD=off, or when that thread failed or
// died (logged once), here. Everything else below is the same: a batch the thread did not finish is
// queued again and written here, and rows it did store are skipped as duplicates.
// Prompts are low-rate (a person typing): recordPrompt writes the row at once, so the session's
// message_count is current when the chat request answers; if that write fails the row joins the queue.
//
// Failure modes:
//   - a failed write is retried every RETRY_MS; the queue holds at most MAX_QUEUED rows, beyond that
//     new rows are dropped and counted in an error log line;
//   - a graceful stop (SIGINT/SIGTERM, or the close of the running app) writes the quota service's
//     rows and then this queue before the database closes (flushUsageAtShutdown, each step bounded
//     by SHUTDOWN_FLUSH_TIMEOUT_MS; what is left is logged as counts);
//   - a crash loses the rows still queued (at most FLUSH_INTERVAL_MS of calls, or the backlog of a
//     failing database): that loses message rows and their message-derived statistics only. Quota
//     accounting never depends on this queue: the settle is written by services/quota.ts.
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import { sqliteOwnWrites } from '../../db/invalidated-cache.ts';
import { quotaServiceFor } from '../quota.ts';
import { type IngestMessage, ingestService } from './ingest.ts';
import {
  type MessageWriterThread,
  startMessageWriterThread,
  type WriterTarget,
} from './message-writer-thread.ts';
import { groupCommit } from './prompt-group-commit.ts';
import {
  callMessageId,
  type ProxiedCall,
  promptRow,
  proxiedCallRow,
  type RemotePrompt,
} from './remote-message-rows.ts';

export const FLUSH_INTERVAL_MS = 100;
/**
 * Rows per transaction. On SQLite a write runs on the API's own thread and transactions queue behind
 * each other: short ones let the proxy's quota transactions in between (bench/proxy p99 at c=64).
 */
const WRITE_SLICE = 100;
/** SQLite rows per transaction of the writer thread: each holds the one write lock ~1 ms. */
const SQLITE_THREAD_SLICE = 20;
const RETRY_MS = 1_000;
export const MAX_QUEUED = 50_000;

interface WriterSettings {
  SVC_USAGE_WRITER_THREAD?: 'on' | 'off';
  SVC_PROXY_ACCOUNTING?: 'thread' | 'inline';
}

export {
  callMessageId,
  type ProxiedCall,
  promptRow,
  proxiedCallRow,
  type RemotePrompt,
  type RemoteSessionRef,
} from './remote-message-rows.ts';

interface Deps {
  database: DatabaseHandle;
  now: () => Date;
  logger?: Logger;
  /**
   * SVC_USAGE_WRITER_THREAD: 'off' keeps the PostgreSQL writes on this thread (message-writer-thread.ts).
   * SVC_PROXY_ACCOUNTING: 'thread' starts that thread on SQLite too.
   */
  settings?: WriterSettings & { dataDir?: string };
}

export function remoteMessages(deps: Deps) {
  const quota = quotaServiceFor(deps);
  const dataDir = deps.settings?.dataDir;
  const ingest = ingestService({ ...deps, settings: dataDir === undefined ? undefined : { dataDir } });
  const settled = { accounting: 'already-settled' } as const;
  // Concurrent chats' prompt rows share one transaction (services/usage/prompt-group-commit.ts: they
  // contend for the same statistics rows); each chat still answers only after its own row is stored.
  const prompts = groupCommit<IngestMessage>(async (rows) => {
    await ingest.ingestMessages(rows, settled);
  }, WRITE_SLICE);
  let queue: IngestMessage[] = [];
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  /** Rows taken by the write in progress (for pending()). */
  let writingRows = 0;
  /** Set by stopTimers() at shutdown: nothing more is scheduled (flush() still writes). */
  let stopped = false;

  /** After a failed write, timer-driven flushes wait until then (an explicit flush() does not). */
  let pausedUntil = 0;

  // PostgreSQL: the rows are written by a worker thread with its own pool (message-writer-thread.ts),
  // started on the first write (SQLite too with SVC_PROXY_ACCOUNTING=thread, on a file database); a
  // thread that failed or died, or after close(): on this thread.
  let threadWanted = deps.settings?.SVC_USAGE_WRITER_THREAD !== 'off';
  let sqliteThread = deps.settings?.SVC_PROXY_ACCOUNTING === 'thread';
  let thread: MessageWriterThread | undefined;
  let fallbackLogged = false;
  function writerTarget(): { target: WriterTarget; slice: number } | undefined {
    const { database } = deps;
    const url = database.pool?.options.connectionString;
    if (database.dialect === 'postgres')
      return url ? { target: { databaseUrl: url }, slice: WRITE_SLICE } : undefined;
    const file = database.file;
    if (!sqliteThread || file === undefined || file === ':memory:') return undefined;
    return { target: { sqlitePath: file }, slice: SQLITE_THREAD_SLICE };
  }
  function writerThread(): MessageWriterThread | undefined {
    if (thread !== undefined) {
      if (!thread.broken) return thread;
      if (!fallbackLogged)
        deps.logger?.error('remote messages: writer thread died; writing on the API thread from now on');
      fallbackLogged = true;
      return undefined;
    }
    const where = threadWanted ? writerTarget() : undefined;
    if (where === undefined) return undefined;
    try {
      thread = startMessageWriterThread(where.target, where.slice);
    } catch (error) {
      threadWanted = false;
      deps.logger?.error(
        { err: (error as Error)?.message?.slice(0, 200) },
        'remote messages: writer thread not started; writing on the API thread',
      );
      return undefined;
    }
    return thread;
  }

  function schedule(ms: number) {
    if (timer !== undefined || stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush(false);
    }, ms).unref();
  }

  function enqueue(rows: IngestMessage[]) {
    const room = MAX_QUEUED - queue.length;
    if (rows.length > room) dropped += rows.length - Math.max(room, 0);
    if (room > 0) queue.push(...rows.slice(0, room));
    schedule(FLUSH_INTERVAL_MS);
  }

  async function write(rows: IngestMessage[]): Promise<void> {
    try {
      const t = writerThread();
      // SQLite: the thread's commits are this process's own, not another process's (caches stay).
      if (t !== undefined) await sqliteOwnWrites(deps.database, () => t.write(rows, deps.now()));
      else
        for (let i = 0; i < rows.length; i += WRITE_SLICE)
          await ingest.ingestMessages(rows.slice(i, i + WRITE_SLICE), settled);
    } catch (error) {
      deps.logger?.error(
        { err: (error as Error)?.message?.slice(0, 200), rows: rows.length },
        'remote messages: writing message rows failed; will retry',
      );
      // Rows already stored by a partial write are skipped as duplicates on the retry.
      queue = rows.concat(queue).slice(0, MAX_QUEUED);
      pausedUntil = Date.now() + RETRY_MS;
      schedule(RETRY_MS);
    }
  }

  /**
   * Writes the quota service's reporting rows, then the rows queued so far. The rows are taken before
   * the quota flush: the settle of each was queued before the row, so its daily_usage is written first.
   */
  async function flush(explicit = true): Promise<void> {
    while (writing) await writing;
    if (!explicit && Date.now() < pausedUntil) {
      schedule(pausedUntil - Date.now());
      return;
    }
    if (dropped > 0) {
      deps.logger?.error({ dropped }, 'remote messages: queue full; message rows dropped (quota unaffected)');
      dropped = 0;
    }
    const rows = queue;
    queue = [];
    writingRows = rows.length;
    const run = (async () => {
      await quota.flush();
      if (rows.length > 0) await write(rows);
    })();
    writing = run;
    try {
      await run;
    } finally {
      if (writing === run) writing = undefined;
      writingRows = 0;
    }
  }

  return {
    /** Queues the assistant row of an answered proxied call; no I/O (written by the next flush). */
    recordProxiedCall(call: ProxiedCall): void {
      enqueue([proxiedCallRow(call, callMessageId(call.at.getTime()))]);
    },

    /** Writes the user row of a prompt now; on failure it is queued and retried. Never throws. */
    async recordPrompt(prompt: RemotePrompt): Promise<void> {
      const row = promptRow(prompt);
      try {
        await prompts.submit(row);
      } catch (error) {
        deps.logger?.error(
          { err: (error as Error)?.message?.slice(0, 200) },
          'remote messages: prompt row not written; queued for retry',
        );
        enqueue([row]);
      }
    },

    /** Writes everything queued now (tests, shutdown). */
    flush: () => flush(true),

    /** Rows not written yet (queued, or in the write in progress). */
    pending: (): number => queue.length + writingRows,

    /** Shutdown: no more timer-driven flushes or retries (flush() still writes). */
    stopTimers(): void {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },

    /** Shutdown, after the last flush: ends the writer thread (its pool closes); later writes run here. */
    async closeWriterThread(): Promise<void> {
      threadWanted = false;
      const t = thread;
      thread = undefined;
      if (t !== undefined) await t.close();
    },

    /** Whether the rows are written by the worker thread (tests, the bench's first line). */
    writesOnThread: (): boolean => thread !== undefined && !thread.broken,

    /** The writer switches of the app's settings (the first caller may have had none). */
    configure(settings: WriterSettings): void {
      if (thread !== undefined) return;
      if (settings.SVC_USAGE_WRITER_THREAD === 'off') threadWanted = false;
      if (settings.SVC_PROXY_ACCOUNTING === 'thread') sqliteThread = true;
    },

    /** Chaos tests: ends the writer thread at once, as a crash of it would. */
    async killWriterThread(): Promise<void> {
      await thread?.terminate();
    },
  };
}

export type RemoteMessages = ReturnType<typeof remoteMessages>;

const instances = new WeakMap<DatabaseHandle, RemoteMessages>();

/** The process's queue for this database (one instance, like quotaServiceFor). */
export function remoteMessagesFor(deps: Deps): RemoteMessages {
  let s = instances.get(deps.database);
  if (!s) {
    s = remoteMessages(deps);
    instances.set(deps.database, s);
  } else if (deps.settings) s.configure(deps.settings);
  return s;
}

/** How long each shutdown step (the quota service's writes, then the message rows) may take. */
export const SHUTDOWN_FLUSH_TIMEOUT_MS = 5_000;

/** What a shutdown could not write (counts only). */
export interface UnwrittenUsage {
  settles: number;
  reportRows: number;
  messageRows: number;
}

/** Whether `work` ended within `ms` (it goes on in the background when it did not). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    // A failed write is done too: what it left is counted by the caller.
    const done = work.then(
      () => true as const,
      () => true as const,
    );
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Graceful shutdown (bin/runtime.ts, the close of listen(): after the HTTP server stopped taking
 * calls, before the database closes). Returns the quota leases, writes the quota service's settles and merged reporting rows
 * first, then the queued message rows (the order services/quota.ts's header gives: daily_usage holds
 * the day before usage_summary counts its messages), each step bounded by `timeoutMs`. A call that
 * ended a moment before (a compressed answer's usage is read asynchronously) is picked up by a second
 * round. Nothing is scheduled afterwards; what could not be written is logged as counts and returned.
 */
export async function flushUsageAtShutdown(
  deps: Deps,
  timeoutMs = SHUTDOWN_FLUSH_TIMEOUT_MS,
): Promise<UnwrittenUsage> {
  const quota = quotaServiceFor(deps);
  const messages = instances.get(deps.database);
  const unwritten = (): UnwrittenUsage => {
    const q = quota.pending();
    return { settles: q.settles, reportRows: q.reportRows, messageRows: messages?.pending() ?? 0 };
  };
  const nothingLeft = (u: UnwrittenUsage) => u.settles + u.reportRows + u.messageRows === 0;
  // Quota leases (on by default) hold room reserved for the day: give it back with the last writes
  // (a lease with calls in flight is given back when they settle, within the rounds below).
  await within(quota.returnLeases(), timeoutMs);
  for (let round = 0; round < 3; round++) {
    if (!(await within(quota.flush(), timeoutMs))) break;
    if (messages && !(await within(messages.flush(), timeoutMs))) break;
    // Let work that was about to be queued (a response's last callbacks) join the next round.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (nothingLeft(unwritten())) break;
  }
  quota.stopTimers();
  messages?.stopTimers();
  if (messages) await within(messages.closeWriterThread(), timeoutMs);
  const left = unwritten();
  if (!nothingLeft(left))
    deps.logger?.error(
      { settles: left.settles, report_rows: left.reportRows, message_rows: left.messageRows },
      'shutdown: usage not written before the database closed',
    );
  return left;
}
