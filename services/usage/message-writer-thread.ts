// The message rows of proxied calls written off the API's thread (issue 16 item 4; on SQLite too with
// SVC_PROXY_ACCOUNTING=thread, issue 31 item 1).
//
// Why: writing a proxied call's assistant row (services/usage/remote-messages.ts) costs the thread that
// serves the model proxy ~35-50 us of CPU per row on PostgreSQL (bench/proxy/message-rows.ts: the
// driver's parameter encoding and result parsing of the multi-row INSERT ... RETURNING and the
// statistics UPSERTs), which is most of what separates the proxy from the bare forwarder at
// concurrency 64 (bench/proxy/README.md). A worker thread with its own pool does that work; the API's
// thread only hands it the batch (a structured clone of plain row objects).
//
// Protocol: `write(rows, at)` posts one batch and resolves when the thread committed all its slices
// (rejects with the thread's error message). The queue in remote-messages.ts keeps everything else:
// the order (the quota flush is awaited before a batch is posted), the retry of a failed batch, the
// dedup by message_id (ON CONFLICT DO NOTHING, so a batch retried after a partial write inserts
// nothing twice), MAX_QUEUED, and the shutdown flush, which awaits the last batch and then `close()`
// (the thread closes its pool and ends).
//
// Failure modes: a thread that cannot start or dies (its 'error' or 'exit') fails every batch in
// flight (they are retried by the queue) and the writer reports itself `broken`: the queue then writes
// on its own thread, as before. A crash of the process loses what the queue and the thread held (the
// same window as before: at most FLUSH_INTERVAL_MS of calls or a failing database's backlog; never
// quota, which services/quota.ts writes).
//
// SQLite (opt-in, SVC_PROXY_ACCOUNTING=thread): the thread opens a second connection to the WAL file.
// Its write transaction holds the database's one write lock, and an API transaction that starts then
// waits in SQLite's busy handler, which sleeps on the API's thread; so the caller gives it short slices
// (remote-messages.ts), each holding the lock about a millisecond.
import { Worker } from 'node:worker_threads';
import type { IngestMessage } from './ingest.ts';
import type { WriterData, WriterReply, WriterRequest } from './message-writer-worker.ts';

export interface MessageWriterThread {
  write(rows: IngestMessage[], at: Date): Promise<void>;
  /** The thread failed to start or died: write on the caller's thread instead. */
  readonly broken: boolean;
  /** Closes the thread's pool and ends it (after the last write). */
  close(): Promise<void>;
  /** Ends the thread at once, as a crash of it would (the chaos tests). */
  terminate(): Promise<void>;
}

/** Where the thread writes: a PostgreSQL URL, or a SQLite file (never ':memory:', which is per connection). */
export type WriterTarget = { databaseUrl: string } | { sqlitePath: string };

export function startMessageWriterThread(target: WriterTarget, slice: number): MessageWriterThread {
  const workerData: WriterData = {
    entry: new URL('./message-writer-worker.ts', import.meta.url).href,
    ...target,
    slice,
  };
  const worker = new Worker(new URL('./message-writer-boot.mjs', import.meta.url), { workerData });
  // The thread never keeps the process alive (the shutdown flush closes it first when it runs).
  worker.unref();
  const waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let broken = false;
  let closed: Promise<void> | undefined;
  let onClosed: (() => void) | undefined;

  const failAll = (why: string) => {
    broken = true;
    for (const w of waiting.values()) w.reject(new Error(why));
    waiting.clear();
    onClosed?.();
  };
  worker.on('message', (reply: WriterReply) => {
    if ('closed' in reply) {
      onClosed?.();
      return;
    }
    const w = waiting.get(reply.id);
    if (w === undefined) return;
    waiting.delete(reply.id);
    if (reply.ok) w.resolve();
    else w.reject(new Error(reply.error));
  });
  worker.on('error', (err) =>
    failAll(`message writer thread failed: ${String((err as Error)?.message).slice(0, 200)}`),
  );
  worker.on('exit', () => failAll('message writer thread ended'));

  return {
    get broken() {
      return broken;
    },
    write(rows, at) {
      if (broken || closed) return Promise.reject(new Error('message writer thread is not running'));
      const id = ++nextId;
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ type: 'write', id, rows, at } satisfies WriterRequest);
      });
    },
    close() {
      if (closed) return closed;
      closed = broken
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            onClosed = resolve;
            worker.postMessage({ type: 'close' } satisfies WriterRequest);
          });
      return closed;
    },
    async terminate() {
      await worker.terminate();
    },
  };
}
