// Building blocks for response schemas shared by many routes (api/openapi/endpoint.ts `responses`).
// Objects are open (`z.looseObject`): a field added to an answer later is not a broken answer; what
// is listed is what the route guarantees (present, of this type).
import { z } from 'zod';

/** An integer count (tokens, requests, money in cents). */
export const count = z.number().int();
/** A calendar day, YYYY-MM-DD. */
export const day = z.string().meta({ format: 'date' });
/** An ISO 8601 timestamp. */
export const timestamp = z.string().meta({ format: 'date-time' });
export const nullableString = z.string().nullable();
export const nullableInt = z.number().int().nullable();

/** `{success: true}` and whatever else the route adds. */
export const okAnswer = z.looseObject({ success: z.literal(true) });
/** `{message}` answers of deletes and actions. */
export const messageAnswer = z.looseObject({ message: z.string() });

/** The totals of domain/usage/read-figures.ts byTool. */
export const usageTotals = {
  total_tokens: count,
  total_input_tokens: count,
  total_output_tokens: count,
  total_cache_tokens: count,
  total_requests: count,
};
/** One tool's figures (read-figures.ts byTool). */
export const toolFigures = z.looseObject({
  tool_name: z.string(),
  tokens: count,
  input_tokens: count,
  output_tokens: count,
  cache_tokens: count,
  requests: count,
});
/** One day's figures (read-figures.ts byDay). */
export const dayFigures = z.looseObject({
  date: day,
  tokens: count,
  input_tokens: count,
  output_tokens: count,
  cache_tokens: count,
  requests: count,
});

/** A paged list `{<key>: [...], total}` (limit and offset when the route echoes them). */
export const pageOf = <T extends z.ZodType>(key: string, item: T) =>
  z.looseObject({ [key]: z.array(item), total: count });
/** `{<key>: [...]}`. */
export const listOf = <T extends z.ZodType>(key: string, item: T) => z.looseObject({ [key]: z.array(item) });
/** Any JSON object (a figure set the route does not fix field by field). */
export const anyObject = z.looseObject({});
