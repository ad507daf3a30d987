// The counting rules of every usage figure, pure (docs/administrators/usage-analytics-and-roi.md "Reading usage"). One place, so no endpoint
// counts on its own:
//   - requests: one request is one assistant message in daily_messages (spec rule 3). A usage report's
//     `request_count` is stored with the report (usage_uploads) but never counted: a report has no
//     messages. The SQL form of the rule is db/repositories/usage/read-requests.ts (REQUESTS_OF and
//     the per-cell counts every endpoint reads).
//   - tokens: a day of a tool on a host (date, tool_name, host_name) that has messages, in any tenant,
//     is counted from its messages (and the model proxy's calls); a usage report for that same day,
//     tool and host restates the same usage and adds nothing. A report counts only while no message
//     exists for its day, tool and host; when the first message arrives, the report's figures are taken
//     back out (services/usage/ingest.ts). So whatever the order of the uploads, nothing is counted twice.
import type { UsageFigures } from './usage-figures.ts';

/** The role of a message that is one request (spec rule 3). */
export const REQUEST_ROLE = 'assistant';

export const isRequest = (role: string): boolean => role === REQUEST_ROLE;

const NOTHING: UsageFigures = {
  tokensUsed: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheTokens: 0,
  requestCount: 0,
};

/** What a stored usage report adds to the statistics: nothing when its day has messages; never requests. */
export function countedReport(report: UsageFigures, dayHasMessages: boolean): UsageFigures {
  if (dayHasMessages) return NOTHING;
  return { ...report, requestCount: 0 };
}

/** A (date, tool_name, host_name) key: the unit the report rule above decides on. */
export interface UsageDay {
  date: string;
  toolName: string;
  hostName: string;
}

export const usageDayKey = (d: UsageDay): string => `${d.date}\u0000${d.toolName}\u0000${d.hostName}`;

/** The distinct days of `rows`, sorted by key (locks are taken in this order: no deadlock cycle). */
export function usageDaysOf(rows: readonly UsageDay[]): UsageDay[] {
  const out = new Map<string, UsageDay>();
  for (const r of rows) {
    const k = usageDayKey(r);
    if (!out.has(k)) out.set(k, { date: r.date, toolName: r.toolName, hostName: r.hostName });
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}
