// One source's part of a collection (issue 10 item 3), shared by the server's collection workflow
// (activities/usage/collect.ts, storing through services/usage/ingest.ts) and `npm run collect`
// (bin/collect.ts, posting to /api/upload/batch): the same readers, the same batching, the same
// resumable state; only the sink and the state store differ.
//
// Files are visited in path order (optionally only those after `afterPath`, at most `maxFiles` of them,
// so a long source can be split into several bounded calls). Messages are sent to the sink in batches
// of `batchSize`; a file's new state is remembered only after every message read from it has been
// accepted, so an interrupted run reads those lines again next time (the sink de-duplicates).
import { stat } from 'node:fs/promises';
import {
  emptyProgress,
  type FileError,
  MAX_LISTED_ERRORS,
  type SourceProgress,
} from '../../domain/collectors/progress.ts';
import type { TranscriptSource } from '../../domain/collectors/sources.ts';
import type { CollectedMessage } from '../../domain/collectors/transcript.ts';
import type { FileState, StateStore } from './file-state.ts';
import { readTranscript } from './read-transcript.ts';
import { listTranscriptFiles } from './transcript-files.ts';

/** A message as sent: the reader's, plus who and where. */
export type OutgoingMessage = CollectedMessage & { host_name: string; sender_name: string };

export interface SinkOutcome {
  stored: number;
  duplicates: number;
  /** Rows the sink refused (validation); counted as errors. */
  rejected: number;
}

export type MessageSink = (messages: OutgoingMessage[]) => Promise<SinkOutcome>;

export interface CollectSourceOptions {
  source: TranscriptSource;
  dirs: readonly string[];
  state: StateStore;
  sink: MessageSink;
  hostName: string;
  senderName: string;
  now: () => Date;
  settleMs: number;
  /** Messages of earlier days (YYYY-MM-DD) are skipped, and files last modified before it are not read. */
  since?: string;
  batchSize?: number;
  afterPath?: string | null;
  maxFiles?: number;
  /** Called after each file and each accepted batch. */
  onProgress?: (p: SourceProgress) => void | Promise<void>;
}

export async function collectSource(opts: CollectSourceOptions): Promise<SourceProgress> {
  const batchSize = opts.batchSize ?? 2000;
  const progress = emptyProgress(opts.source);
  const { files, missingDirs } = await listTranscriptFiles(opts.source, opts.dirs);
  progress.missing_dirs = missingDirs;
  const todo = opts.afterPath ? files.filter((f) => f > opts.afterPath!) : files;
  const slice = opts.maxFiles === undefined ? todo : todo.slice(0, opts.maxFiles);
  const sinceMs = opts.since ? Date.parse(`${opts.since}T00:00:00Z`) : undefined;

  let queue: OutgoingMessage[] = [];
  let queued = 0;
  let sent = 0;
  /** File states waiting for their messages (up to message number `upTo`) to be accepted. */
  let waiting: Array<{ file: string; state: FileState; upTo: number }> = [];

  const noteError = (e: FileError) => {
    progress.error_count += 1;
    if (progress.errors.length < MAX_LISTED_ERRORS) progress.errors.push(e);
  };
  /** Sends a batch (none when empty), then remembers the files whose messages are all accepted. */
  async function send(batch: OutgoingMessage[]) {
    if (batch.length) {
      const out = await opts.sink(batch);
      progress.stored += out.stored;
      progress.duplicates += out.duplicates;
      if (out.rejected > 0) {
        progress.error_count += out.rejected;
        if (progress.errors.length < MAX_LISTED_ERRORS)
          progress.errors.push({
            file: '',
            line: 0,
            error: `${out.rejected} message(s) refused when stored`,
          });
      }
    }
    sent += batch.length;
    const ready = waiting.filter((w) => w.upTo <= sent);
    waiting = waiting.filter((w) => w.upTo > sent);
    for (const w of ready) await opts.state.put(opts.source, w.file, w.state);
    if (ready.length) await opts.state.commit?.();
    await opts.onProgress?.(progress);
  }

  for (const file of slice) {
    progress.files_seen += 1;
    if (sinceMs !== undefined) {
      const mtime = (await stat(file).catch(() => undefined))?.mtime.getTime();
      if (mtime !== undefined && mtime < sinceMs) {
        progress.last_path = file;
        continue;
      }
    }
    let read: Awaited<ReturnType<typeof readTranscript>>;
    try {
      read = await readTranscript(opts.source, file, await opts.state.get(opts.source, file), {
        now: opts.now(),
        settleMs: opts.settleMs,
      });
    } catch (err) {
      // A file that vanished or cannot be read is an error of this run, not a failure of it.
      noteError({ file, line: 0, error: `cannot read: ${(err as Error).message}` });
      progress.last_path = file;
      continue;
    }
    if (read.bytesRead > 0) progress.files_read += 1;
    if (read.rewritten) progress.files_rewritten += 1;
    for (const e of read.errors) noteError(e);
    const messages = opts.since ? read.messages.filter((m) => m.date >= opts.since!) : read.messages;
    progress.messages += messages.length;
    for (const m of messages) queue.push({ ...m, host_name: opts.hostName, sender_name: opts.senderName });
    queued += messages.length;
    waiting.push({ file, state: read.state, upTo: queued });
    progress.last_path = file;
    while (queue.length >= batchSize) {
      const batch = queue.slice(0, batchSize);
      queue = queue.slice(batchSize);
      await send(batch);
    }
    if (queue.length === 0) await send([]);
    else await opts.onProgress?.(progress);
  }
  if (queue.length || waiting.length) await send(queue);
  progress.done = slice.length === todo.length;
  await opts.onProgress?.(progress);
  return progress;
}
