// A usage report's figures, and what replacing one by another adds (used by counting and the
// ingest aggregate alike; its own file so neither imports the other).
export interface UsageFigures {
  tokensUsed: number;
  inputTokens: number;
  outputTokens: number;
  cacheTokens: number;
  requestCount: number;
}

/** What replacing a stored usage report `before` by `after` adds to the statistics (may be negative). */
export function usageDifference(before: UsageFigures, after: UsageFigures): UsageFigures {
  return {
    tokensUsed: after.tokensUsed - before.tokensUsed,
    inputTokens: after.inputTokens - before.inputTokens,
    outputTokens: after.outputTokens - before.outputTokens,
    cacheTokens: after.cacheTokens - before.cacheTokens,
    requestCount: after.requestCount - before.requestCount,
  };
}

export const isNoChange = (d: UsageFigures) =>
  d.tokensUsed === 0 &&
  d.inputTokens === 0 &&
  d.outputTokens === 0 &&
  d.cacheTokens === 0 &&
  d.requestCount === 0;
