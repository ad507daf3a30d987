// The scheduled collection tick (services/collectors/schedule.ts, `collectors.schedule_enabled`): the
// background fetch scheduler's Temporal Schedule starts this workflow every
// `collectors.schedule_interval_minutes`, and it starts the very run POST /api/fetch/data starts: the
// collection workflow (workflows/usage/collect.ts) under the same fixed id collectWorkflowId(taskQueue),
// with the input both build through services/collectors/run-input.ts (trigger 'schedule', no user).
// So a scheduled run is recorded in collector_runs like a manual one and shows, with its live
// progress, in GET /api/fetch/status, told apart by its `trigger`.
//
// Never two runs: the schedule's overlap policy SKIP does not start a tick while the last one runs,
// and a tick that finds a run going (a manual one, or one of a tick triggered by hand with ALLOW_ALL)
// is refused by the fixed workflow id and ends `skipped`. The tick waits for its run, so the schedule
// sees it running as long as the collection runs. Its input holds the trigger and source ids only.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { executeChild, workflowInfo } from '@temporalio/workflow';
import { collectUsageWorkflow } from './collect.ts';
import { type CollectRunInput, collectWorkflowId } from './contract.ts';

export interface ScheduledCollectResult {
  outcome: 'completed' | 'failed' | 'skipped';
  /** The collection run's id (collector_runs.run_id); null when skipped. */
  run_id: string | null;
}

export async function scheduledCollectWorkflow(input: CollectRunInput): Promise<ScheduledCollectResult> {
  try {
    const result = await executeChild(collectUsageWorkflow, {
      workflowId: collectWorkflowId(workflowInfo().taskQueue),
      args: [input],
    });
    return { outcome: result.status === 'failed' ? 'failed' : 'completed', run_id: result.run_id };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'skipped', run_id: null };
    throw err;
  }
}
