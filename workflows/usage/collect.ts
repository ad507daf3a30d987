// One collection run (POST /api/fetch/data, issue 10 item 3): reads every transcript source the server
// is configured with (Claude Code, Codex) and stores what is new through the ingestion.
//
// One run at a time: the API starts it under the fixed workflow id collectWorkflowId(taskQueue) with a
// FAIL conflict policy, so a second request while one runs is refused (409 naming the running run);
// the run's id is the Temporal run id, also collector_runs.run_id.
// The background fetch scheduler's tick (workflows/usage/collect-schedule.ts) starts it as a child
// under the same id, with trigger 'schedule': one run at a time whoever starts it.
//
// Per source, the files are read in slices of SLICE_FILES files (one activity each, heartbeating), so
// each activity stays short and the `progress` query shows figures that grow during the run. A source
// whose activity fails (after retries) is recorded with its error and the run goes on with the next;
// the run ends `failed` if any source failed, `completed` otherwise. History holds ids, paths and
// counts, never message content.
import { proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CollectActivities } from '../../activities/usage/collect.ts';
import { emptyProgress, mergeProgress, runTotals } from '../../domain/collectors/progress.ts';
import type { TranscriptSource } from '../../domain/collectors/sources.ts';
import {
  type CollectRunInput,
  type CollectRunProgress,
  collectProgressQuery,
  SLICE_FILES,
} from './contract.ts';

const { startCollectorRun, finishCollectorRun } = proxyActivities<CollectActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, maximumInterval: '10 seconds' },
});
const { collectSourceSlice } = proxyActivities<CollectActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '2 seconds' },
});

const pending = (source: TranscriptSource): CollectRunProgress['sources'][number] => ({
  ...emptyProgress(source),
  status: 'pending',
  error: null,
});

/** An activity failure's reason (its cause, the activity's own error), else the error's message. */
const messageOf = (err: unknown) =>
  err instanceof Error ? (err.cause as Error | undefined)?.message || err.message : String(err);

export async function collectUsageWorkflow(input: CollectRunInput): Promise<CollectRunProgress> {
  const runId = workflowInfo().runId;
  const state: CollectRunProgress = {
    run_id: runId,
    status: 'running',
    current_source: null,
    sources: input.sources.map(pending),
  };
  setHandler(collectProgressQuery, () => state);

  await startCollectorRun({ runId, trigger: input.trigger, requestedBy: input.requestedBy });
  for (const s of state.sources) {
    state.current_source = s.source;
    s.status = 'running';
    try {
      do {
        const slice = await collectSourceSlice({
          source: s.source,
          afterPath: s.last_path,
          maxFiles: SLICE_FILES,
        });
        Object.assign(s, mergeProgress(s, slice));
      } while (!s.done);
      s.status = 'completed';
    } catch (err) {
      s.status = 'failed';
      s.error = messageOf(err);
    }
  }
  state.current_source = null;
  const failed = state.sources.filter((s) => s.status === 'failed');
  state.status = failed.length ? 'failed' : 'completed';
  const totals = runTotals(state.sources);
  await finishCollectorRun({
    runId,
    status: state.status,
    totals: { ...totals, errorCount: totals.errorCount + failed.length },
    sources: state.sources,
    error: failed.length ? failed.map((s) => `${s.source}: ${s.error}`).join('; ') : null,
  });
  return state;
}
