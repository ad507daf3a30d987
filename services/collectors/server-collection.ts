// The server's side of a collection (POST /api/fetch/data): reads the transcript folders configured in
// settings `collectors` and stores what it finds through the one ingestion (services/usage/ingest.ts),
// after the same per-row validation as an upload (readMessage). Read offsets live in collector_files.
// Called by the collection workflow's activity, one bounded slice of a source's files at a time.
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { collectorsRepository } from '../../db/repositories/collectors.ts';
import type { SourceProgress } from '../../domain/collectors/progress.ts';
import type { TranscriptSource } from '../../domain/collectors/sources.ts';
import { judgeRows, readMessage } from '../../domain/usage/ingest-rows.ts';
import { ingestService } from '../usage/ingest.ts';
import { collectSource, type MessageSink } from './collect-source.ts';
import type { StateStore } from './file-state.ts';

export interface ServerCollectionDeps {
  database: DatabaseHandle;
  settings: Settings;
  now: () => Date;
}

/** The configured folders of a source. */
export const sourceDirs = (settings: Settings, source: TranscriptSource): string[] =>
  source === 'claude_code' ? settings.collectors.claude_code_dirs : settings.collectors.codex_dirs;

/** Stores collected messages exactly as an upload would. */
export function ingestSink(deps: Pick<ServerCollectionDeps, 'database' | 'now'>): MessageSink {
  const ingest = ingestService(deps);
  return async (messages) => {
    const { valid, rejected } = judgeRows(messages, (m) => readMessage(m));
    const out = valid.length
      ? await ingest.ingestMessages(valid.map((v) => v.row))
      : { inserted: 0, duplicates: 0 };
    return { stored: out.inserted, duplicates: out.duplicates, rejected: rejected.length };
  };
}

export function databaseStateStore(deps: Pick<ServerCollectionDeps, 'database' | 'now'>): StateStore {
  const repo = collectorsRepository(deps.database.sql);
  return {
    get: (source, path) => repo.fileState(source, path),
    put: (source, path, state) => repo.saveFileState(source, path, state, deps.now()),
  };
}

export function collectOnServer(
  deps: ServerCollectionDeps,
  opts: {
    source: TranscriptSource;
    afterPath: string | null;
    maxFiles: number;
    onProgress?: (p: SourceProgress) => void | Promise<void>;
  },
): Promise<SourceProgress> {
  const c = deps.settings.collectors;
  return collectSource({
    source: opts.source,
    dirs: sourceDirs(deps.settings, opts.source),
    state: databaseStateStore(deps),
    sink: ingestSink(deps),
    hostName: c.host_name,
    senderName: c.sender_name,
    now: deps.now,
    settleMs: c.settle_seconds * 1000,
    afterPath: opts.afterPath,
    maxFiles: opts.maxFiles,
    onProgress: opts.onProgress,
  });
}
