// POST /api/summary/refresh as a workflow: recomputes daily_stats, hourly_stats and user_daily_stats
// from daily_messages one date range at a time (activities/usage/summary-refresh.ts), then
// usage_summary (messages + usage reports). Progress is a query (`summaryRefresh.progress`) read by
// GET /api/summary/refresh/:workflow_id; the result is the final progress. Input and history carry the
// host filter, dates and row counts only. Each step is idempotent, so retries and a second refresh are
// safe.
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { SummaryRefreshActivities } from '../../activities/usage/summary-refresh.ts';

export const SUMMARY_REFRESH_ID_PREFIX = 'summary-refresh-';

export interface SummaryRefreshInput {
  /** Only this host's rows; null = every row. */
  host: string | null;
}

export interface SummaryRefreshProgress {
  status: 'planning' | 'running' | 'completed';
  host: string | null;
  first_date: string | null;
  last_date: string | null;
  steps_total: number;
  steps_done: number;
  /** The step running now, e.g. `hourly_stats 2026-01-01..2026-01-31`. */
  current_step: string | null;
  /** Per table: rows written by the recompute. */
  rows_written: Record<string, number>;
}

export const summaryRefreshProgressQuery = defineQuery<SummaryRefreshProgress>('summaryRefresh.progress');

const acts = proxyActivities<SummaryRefreshActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5 },
});

export async function summaryRefreshWorkflow(input: SummaryRefreshInput): Promise<SummaryRefreshProgress> {
  const progress: SummaryRefreshProgress = {
    status: 'planning',
    host: input.host,
    first_date: null,
    last_date: null,
    steps_total: 0,
    steps_done: 0,
    current_step: 'plan',
    rows_written: {},
  };
  setHandler(summaryRefreshProgressQuery, () => progress);
  const step = async (name: string, run: () => Promise<number>, table?: string) => {
    progress.current_step = name;
    const rows = await run();
    if (table) progress.rows_written[table] = (progress.rows_written[table] ?? 0) + rows;
    progress.steps_done += 1;
  };

  const plan = await acts.planSummaryRefresh({ host: input.host });
  progress.first_date = plan.first;
  progress.last_date = plan.last;
  progress.steps_total = plan.tables.length * (plan.chunks.length + 1) + 1;
  progress.status = 'running';
  for (const table of plan.tables) {
    progress.rows_written[table] = 0;
    await step(`${table} outside ${plan.first ?? '-'}..${plan.last ?? '-'}`, () =>
      acts.clearAggregateOutside({ table, host: input.host, first: plan.first, last: plan.last }),
    );
    for (const [from, to] of plan.chunks)
      await step(
        `${table} ${from}..${to}`,
        () => acts.recomputeAggregateRange({ table, host: input.host, from, to }),
        table,
      );
  }
  await step('usage_summary', () => acts.recomputeUsageSummary({ host: input.host }), 'usage_summary');
  progress.current_step = null;
  progress.status = 'completed';
  return progress;
}
