// Activities of the collection workflow (workflows/usage/collect.ts): the run's collector_runs row, and
// one bounded slice of a source's files per call, heartbeating after every file and batch (the
// heartbeat carries the slice's figures so far; a worker that dies mid-slice is noticed within the
// heartbeat timeout and the slice is retried, reading again only what was not yet remembered).
import { Context } from '@temporalio/activity';
import { collectorsRepository, type RunTotals } from '../../db/repositories/collectors.ts';
import type { SourceProgress } from '../../domain/collectors/progress.ts';
import type { TranscriptSource } from '../../domain/collectors/sources.ts';
import { collectOnServer } from '../../services/collectors/server-collection.ts';
import type { ActivityDeps } from '../deps.ts';

export function createCollectActivities(deps: ActivityDeps) {
  const repo = () => collectorsRepository(deps.database.sql);
  return {
    async startCollectorRun(input: {
      runId: string;
      trigger: string;
      requestedBy: number | null;
    }): Promise<void> {
      await repo().ensureRun(input.runId, input.trigger, input.requestedBy, deps.now());
    },

    async collectSourceSlice(input: {
      source: TranscriptSource;
      afterPath: string | null;
      maxFiles: number;
    }): Promise<SourceProgress> {
      const ctx = Context.current();
      return collectOnServer(deps, {
        ...input,
        onProgress: (p) =>
          ctx.heartbeat({ files_seen: p.files_seen, messages: p.messages, stored: p.stored }),
      });
    },

    async finishCollectorRun(input: {
      runId: string;
      status: 'completed' | 'failed';
      totals: RunTotals;
      sources: SourceProgress[];
      error: string | null;
    }): Promise<void> {
      await repo().finishRun(
        input.runId,
        {
          status: input.status,
          totals: input.totals,
          detail: JSON.stringify(input.sources),
          error: input.error,
        },
        deps.now(),
      );
    },
  };
}

export type CollectActivities = ReturnType<typeof createCollectActivities>;
