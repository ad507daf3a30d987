// Collection runs over the configured usage sources (issue 10 item 3; added by 0013_usage_read_model).
import { pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { counter, id, int, str, ts, txt, updatedAt } from './columns.ts';

/** One run of POST /api/fetch/data (or a scheduled one): what it read, stored and failed on. */
export const collectorRuns = pgTable(
  'collector_runs',
  {
    id: id(),
    /** The Temporal workflow id of the run. */
    runId: str('run_id', 100).notNull(),
    /** `api` or `schedule`. */
    trigger: str('trigger', 20).notNull().default('api'),
    /** `running`, `completed` or `failed`. */
    status: str('status', 20).notNull().default('running'),
    requestedBy: int('requested_by'),
    filesRead: counter('files_read'),
    messagesRead: counter('messages_read'),
    messagesStored: counter('messages_stored'),
    duplicates: counter('duplicates'),
    errorCount: counter('error_count'),
    /** JSON text: per source {source, files, messages, stored, duplicates, errors: [...]}. */
    detail: txt('detail'),
    error: txt('error'),
    startedAt: ts('started_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
  },
  (t) => [uniqueIndex('collector_runs_run_id').on(t.runId)],
);

/** How far each transcript file has been read, so the next run reads only what was appended. */
export const collectorFiles = pgTable(
  'collector_files',
  {
    id: id(),
    /** The source that owns the file, e.g. `claude_code` or `codex`. */
    source: str('source', 50).notNull(),
    path: str('path', 1000).notNull(),
    /** Bytes consumed up to the last complete line. */
    byteOffset: counter('byte_offset'),
    /** Size when last read; a smaller size means the file was rewritten. */
    size: counter('size'),
    /** SHA-256 of the file's first bytes: a different head means the file was rewritten from scratch. */
    headHash: str('head_hash', 64),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('collector_files_path').on(t.source, t.path)],
);
