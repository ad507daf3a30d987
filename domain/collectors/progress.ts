// The figures of one source's part of a collection run, pure: what `collectSource` returns per call,
// what the collection workflow adds up across calls (and answers its `progress` query with), and what
// collector_runs.detail stores per source.
import type { TranscriptSource } from './sources.ts';

/** A line (or file) that could not be read; line 0 when the whole file is meant. */
export interface FileError {
  file: string;
  line: number;
  error: string;
}

/** Errors kept per source (the count is exact; the list is capped). */
export const MAX_LISTED_ERRORS = 100;

export interface SourceProgress {
  source: TranscriptSource;
  files_seen: number;
  files_read: number;
  files_rewritten: number;
  messages: number;
  stored: number;
  duplicates: number;
  error_count: number;
  errors: FileError[];
  missing_dirs: string[];
  /** The last file finished (resume after it); null before the first. */
  last_path: string | null;
  done: boolean;
}

export const emptyProgress = (source: TranscriptSource): SourceProgress => ({
  source,
  files_seen: 0,
  files_read: 0,
  files_rewritten: 0,
  messages: 0,
  stored: 0,
  duplicates: 0,
  error_count: 0,
  errors: [],
  missing_dirs: [],
  last_path: null,
  done: false,
});

/** Adds a later call's figures to a source's progress. */
export function mergeProgress(a: SourceProgress, b: SourceProgress): SourceProgress {
  return {
    source: a.source,
    files_seen: a.files_seen + b.files_seen,
    files_read: a.files_read + b.files_read,
    files_rewritten: a.files_rewritten + b.files_rewritten,
    messages: a.messages + b.messages,
    stored: a.stored + b.stored,
    duplicates: a.duplicates + b.duplicates,
    error_count: a.error_count + b.error_count,
    errors: [...a.errors, ...b.errors].slice(0, MAX_LISTED_ERRORS),
    missing_dirs: [...new Set([...a.missing_dirs, ...b.missing_dirs])],
    last_path: b.last_path ?? a.last_path,
    done: b.done,
  };
}

/** A run's totals over its sources (collector_runs' counters). */
export function runTotals(sources: readonly SourceProgress[]) {
  const sum = (k: 'files_read' | 'messages' | 'stored' | 'duplicates' | 'error_count') =>
    sources.reduce((a, s) => a + s[k], 0);
  return {
    filesRead: sum('files_read'),
    messagesRead: sum('messages'),
    messagesStored: sum('stored'),
    duplicates: sum('duplicates'),
    errorCount: sum('error_count'),
  };
}
