// The contract between the API and the collection run (workflows/usage/collect.ts): its id, input,
// progress query and slice size. The API imports these, never the workflow file.
import { defineQuery } from '@temporalio/workflow';
import type { SourceProgress } from '../../domain/collectors/progress.ts';
import type { TranscriptSource } from '../../domain/collectors/sources.ts';

export const collectWorkflowId = (taskQueue: string) => `usage-collect-${taskQueue}`;

/** Files per activity call. */
export const SLICE_FILES = 200;

export interface CollectRunInput {
  trigger: 'api' | 'schedule';
  requestedBy: number | null;
  sources: TranscriptSource[];
}

export interface CollectRunProgress {
  run_id: string;
  status: 'running' | 'completed' | 'failed';
  /** The source being read now, or null. */
  current_source: TranscriptSource | null;
  sources: Array<
    SourceProgress & { status: 'pending' | 'running' | 'completed' | 'failed'; error: string | null }
  >;
}

export const collectProgressQuery = defineQuery<CollectRunProgress>('progress');
