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
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import { dayKey } from '../../domain/quota.ts';
import { DEFAULT_TENANT_ID } from '../../domain/tenants.ts';
import type { Usage } from '../../domain/usage/usage.ts';
import { quotaServiceFor } from '../quota.ts';
import { type IngestMessage, ingestService } from './ingest.ts';

export const FLUSH_INTERVAL_MS = 100;
/**
 * Rows per transaction. On SQLite a write runs on the API's own thread and transactions queue behind
 * each other: short ones let the proxy's quota transactions in between (bench/proxy p99 at c=64).
 */
const WRITE_SLICE = 100;
const RETRY_MS = 1_000;
export const MAX_QUEUED = 50_000;

/** Where remote work happened, from the session. */
export interface RemoteSessionRef {
  sessionId: string;
  /** The session's user (the message's user_id). */
  userId: number;
  /** The session's tenant; null counts under DEFAULT_TENANT_ID (like an unknown sender's upload). */
  tenantId: number | null;
  toolName: string;
  hostName: string;
  projectPath?: string | null;
}

/** A model call the provider answered (2xx). */
export interface ProxiedCall extends RemoteSessionRef {
  /** The proxy's request id (tracing only: the caller may choose it, so it is not the message id). */
  requestId: string;
  /** Username of the token's user (sender_name). */
  username: string | null;
  /** The day the call counted in quota (its reservation's day), so daily_messages agrees with daily_usage. */
  day: string;
  at: Date;
  usage: Usage | null;
  provider: string;
  endpoint: string;
}

/** A prompt a user sent to a remote session. */
export interface RemotePrompt extends RemoteSessionRef {
  /** The id of the session.input command that carries it (the message id). */
  commandId: string;
  /** Who typed it (sender_name). */
  username: string | null;
  content: string;
  model: string | null;
  at: Date;
}

let lastMs = 0;
let seq = 0;
/** 64 random bits drawn once per process: (milliseconds, sequence) is unique within it. */
const PROCESS_SUFFIX = randomBytes(8).toString('hex');

/**
 * A message id for a proxied call: time-ordered (milliseconds and a per-process sequence, base 36),
 * then 64 random bits drawn once per process, so ids of several API instances never collide (the
 * pair before it never repeats within a process: a clock that steps back keeps counting on the last
 * millisecond seen). Time order keeps the inserts into daily_messages' natural-key index on its right
 * edge; random UUIDs spread them over the whole index (measured on SQLite: 53 against 36 us of CPU per
 * row at 50k rows, and worse as it grows). No random draw per call (bench/proxy: ~3 us each).
 */
export function callMessageId(now: number): string {
  if (now <= lastMs) seq += 1;
  else {
    lastMs = now;
    seq = 0;
  }
  return `${lastMs.toString(36).padStart(9, '0')}-${seq.toString(36).padStart(4, '0')}-${PROCESS_SUFFIX}`;
}

const cut = (v: string | null | undefined, max: number): string | null =>
  v == null ? null : v.length > max ? v.slice(0, max) : v;

/**
 * A row of daily_messages for remote work. Built as one object literal: spreading a shared part into
 * a literal with more properties after it cost about 15 us per row in V8 (measured), on the thread
 * that serves the proxy.
 */
function remoteRow(
  ref: RemoteSessionRef,
  m: Pick<
    IngestMessage,
    | 'date'
    | 'messageId'
    | 'role'
    | 'content'
    | 'fullEntry'
    | 'tokensUsed'
    | 'inputTokens'
    | 'outputTokens'
    | 'model'
    | 'timestamp'
    | 'senderName'
    | 'messageSource'
  >,
): IngestMessage {
  return {
    date: m.date,
    toolName: cut(ref.toolName, 100) ?? 'remote',
    hostName: cut(ref.hostName, 255) ?? 'localhost',
    messageId: m.messageId,
    parentId: null,
    role: m.role,
    content: m.content,
    fullEntry: m.fullEntry,
    tokensUsed: m.tokensUsed,
    inputTokens: m.inputTokens,
    outputTokens: m.outputTokens,
    model: m.model,
    timestamp: m.timestamp,
    senderId: null,
    senderName: m.senderName,
    messageSource: m.messageSource,
    conversationId: null,
    agentSessionId: ref.sessionId,
    projectPath: cut(ref.projectPath, 500),
    owner: { userId: ref.userId, tenantId: ref.tenantId ?? DEFAULT_TENANT_ID },
  };
}

/** The assistant row of a proxied call. */
export function proxiedCallRow(call: ProxiedCall, messageId: string): IngestMessage {
  const u = call.usage;
  const entry: Record<string, unknown> = {
    request_id: call.requestId,
    provider: call.provider,
    endpoint: call.endpoint,
  };
  if (u === null) entry.usage_unknown = true;
  else if (u.estimated) entry.estimated = true;
  return remoteRow(call, {
    date: call.day,
    messageId,
    role: 'assistant',
    content: null,
    fullEntry: JSON.stringify(entry),
    tokensUsed: u?.totalTokens ?? 0,
    inputTokens: u?.inputTokens ?? 0,
    outputTokens: u?.outputTokens ?? 0,
    model: cut(u?.model, 100),
    timestamp: call.at,
    senderName: cut(call.username, 255),
    messageSource: 'proxy',
  });
}

/** The user row of a prompt. */
export function promptRow(p: RemotePrompt): IngestMessage {
  return remoteRow(p, {
    date: dayKey(p.at),
    messageId: p.commandId,
    role: 'user',
    content: p.content,
    fullEntry: null,
    tokensUsed: 0,
    inputTokens: 0,
    outputTokens: 0,
    model: cut(p.model, 100),
    timestamp: p.at,
    senderName: cut(p.username, 255),
    messageSource: 'remote',
  });
}

interface Deps {
  database: DatabaseHandle;
  now: () => Date;
  logger?: Logger;
}

export function remoteMessages(deps: Deps) {
  const quota = quotaServiceFor(deps);
  const ingest = ingestService(deps);
  const settled = { accounting: 'already-settled' } as const;
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
        await ingest.ingestMessages([row], settled);
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
  }
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
 * calls, before the database closes). Writes the quota service's settles and merged reporting rows
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
  for (let round = 0; round < 3; round++) {
    if (!(await within(quota.flush(), timeoutMs))) break;
    if (messages && !(await within(messages.flush(), timeoutMs))) break;
    // Let work that was about to be queued (a response's last callbacks) join the next round.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (nothingLeft(unwritten())) break;
  }
  quota.stopTimers();
  messages?.stopTimers();
  const left = unwritten();
  if (!nothingLeft(left))
    deps.logger?.error(
      { settles: left.settles, report_rows: left.reportRows, message_rows: left.messageRows },
      'shutdown: usage not written before the database closed',
    );
  return left;
}
