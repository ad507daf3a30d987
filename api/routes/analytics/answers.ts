// Response schemas of the /api/analysis/* reads (analysis.ts) for /api/openapi.json, written from
// the handlers' answers. Open objects; a figure that is absent on an empty window (a peak, a change
// against a zero period) is nullable.
import { z } from 'zod';
import { anyObject, count, day, nullableString } from '../../openapi/shapes.ts';

const n = z.number();
const window = { start: day, end: day };
const anomalyMethod = z.looseObject({ name: z.string(), description: z.string(), threshold: n });
const nullableNumber = n.nullable();

export const batchAnswer = z.looseObject({
  ...window,
  host: nullableString,
  totals: anyObject,
  daily: z.array(z.looseObject({ date: day })),
});
export const keyMetricsAnswer = z.looseObject({
  period: z.looseObject(window),
  previous_period: z.looseObject(window),
  tokens: count,
  input_tokens: count,
  output_tokens: count,
  requests: count,
  messages: count,
  active_users: count,
  tokens_per_request: nullableNumber,
  today: anyObject,
  previous: anyObject,
  change_percent: z.record(z.string(), nullableNumber),
});
export const hourlyAnswer = z.looseObject({
  date: day,
  tool: nullableString,
  host: nullableString,
  hours: z.array(z.looseObject({ hour: count, tokens: count, requests: count, messages: count })),
  totals: anyObject,
  peak_hour: z.number().int().nullable(),
});
export const dailyHourlyAnswer = z.looseObject({
  ...window,
  days: z.array(
    z.looseObject({
      date: day,
      tokens: count,
      messages: count,
      tokens_by_hour: z.array(count),
      messages_by_hour: z.array(count),
    }),
  ),
});
export const peakAnswer = z.looseObject({
  ...window,
  peak_hour: anyObject.nullable(),
  peak_day: anyObject.nullable(),
  peak_weekday: nullableString,
  by_hour: z.array(z.looseObject({ hour: count })),
  by_weekday: z.array(z.looseObject({ weekday: z.string() })),
});
export const conversationStatsAnswer = z.looseObject({
  ...window,
  conversations: count,
  messages: count,
  requests: count,
  tokens: count,
  by_tool: z.array(z.looseObject({ tool_name: z.string() })),
  agent_sessions_by_status: z.record(z.string(), n),
});
export const segmentationAnswer = z.looseObject({ ...window, method: z.string(), total_users: count });
export const toolComparisonAnswer = z.looseObject({
  ...window,
  tools: z.array(z.looseObject({ tool_name: z.string(), tokens: count, requests: count })),
});
export const anomalyTrendAnswer = z.looseObject({
  ...window,
  method: anomalyMethod,
  total: count,
  days: z.array(z.looseObject({ date: day, anomalies: count })),
});
export const recommendationsAnswer = z.looseObject({
  ...window,
  recommendations: z.array(anyObject),
  basis: anyObject,
});
export const rankingAnswer = z.looseObject({
  ...window,
  limit: count,
  ranking: z.array(z.looseObject({ rank: count, tokens: count })),
});
export const anomalyDetectionAnswer = z.looseObject({
  ...window,
  method: anomalyMethod,
  filters: z.looseObject({ type: nullableString, severity: nullableString }),
  count,
  anomalies: z.array(anyObject),
});
