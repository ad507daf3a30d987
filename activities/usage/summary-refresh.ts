// The steps of a summary refresh (workflows/usage/summary-refresh.ts), each one short transaction of
// db/repositories/usage/recompute.ts. Every step rewrites its rows from the sources, so a retried or
// repeated step gives the same rows.
import {
  DATE_KEYED_TABLES,
  type DateKeyedTable,
  recomputeRepository,
} from '../../db/repositories/usage/recompute.ts';
import type { ActivityDeps } from '../deps.ts';

/** Days per recompute transaction of a date-keyed table. */
export const REFRESH_CHUNK_DAYS = 31;
/**
 * Most chunks one refresh plans. Dates are whatever was uploaded (year 0001 to 9999 are calendar
 * dates): a long span widens the chunks instead of multiplying them, so the plan (an activity answer
 * in the history) and the steps stay bounded; five years of data keep 31-day chunks. Found by
 * `npm run fuzz`: two rows dated 0001-01-01 and 9999-12-31 made a 2.6 MB plan of 118,000 chunks.
 */
export const REFRESH_MAX_CHUNKS = 60;

export interface SummaryRefreshPlan {
  first: string | null;
  last: string | null;
  /** Inclusive [from, to] date ranges covering first..last. */
  chunks: Array<[string, string]>;
  tables: DateKeyedTable[];
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Chunk length for first..last: REFRESH_CHUNK_DAYS, or wider so that at most REFRESH_MAX_CHUNKS cover it. */
export function chunkDaysFor(first: string, last: string): number {
  const span = Math.floor((Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / DAY_MS) + 1;
  return Math.max(REFRESH_CHUNK_DAYS, Math.ceil(span / REFRESH_MAX_CHUNKS));
}

/** [from, to] ranges of `days` days covering first..last (inclusive). */
export function dateChunks(first: string, last: string, days: number): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const end = Date.parse(`${last}T00:00:00Z`);
  for (let from = Date.parse(`${first}T00:00:00Z`); from <= end; from += days * DAY_MS)
    out.push([dayOf(from), dayOf(Math.min(end, from + (days - 1) * DAY_MS))]);
  return out;
}

export function createSummaryRefreshActivities(deps: Pick<ActivityDeps, 'database'>) {
  const repo = recomputeRepository(deps.database);
  return {
    async planSummaryRefresh(input: { host: string | null }): Promise<SummaryRefreshPlan> {
      const { first, last } = await repo.messageDateRange(input.host);
      const chunks = first && last ? dateChunks(first, last, chunkDaysFor(first, last)) : [];
      return { first, last, chunks, tables: [...DATE_KEYED_TABLES] };
    },
    async clearAggregateOutside(input: {
      table: DateKeyedTable;
      host: string | null;
      first: string | null;
      last: string | null;
    }): Promise<number> {
      return repo.clearOutside(input.table, input.host, input.first, input.last);
    },
    async recomputeAggregateRange(input: {
      table: DateKeyedTable;
      host: string | null;
      from: string;
      to: string;
    }): Promise<number> {
      return repo.recomputeRange(input.table, input.host, input.from, input.to);
    },
    async recomputeUsageSummary(input: { host: string | null }): Promise<number> {
      return repo.recomputeUsageSummary(input.host);
    },
  };
}

export type SummaryRefreshActivities = ReturnType<typeof createSummaryRefreshActivities>;
