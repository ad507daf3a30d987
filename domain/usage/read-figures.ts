// Assembly of the usage read answers, pure: token sums (from daily_usage) and request counts (from
// daily_messages, rule 3) merged per tool and per day, with totals. Day lists have one entry per day
// of the range, zeros included, so a chart needs no gap filling.
import { eachDay } from './read-dates.ts';

export interface TokenFigures {
  tokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheTokens: number;
}

const NONE: TokenFigures = { tokens: 0, inputTokens: 0, outputTokens: 0, cacheTokens: 0 };

export interface ToolFigures {
  tool_name: string;
  tokens: number;
  input_tokens: number;
  output_tokens: number;
  cache_tokens: number;
  requests: number;
}

export interface Totals {
  total_tokens: number;
  total_input_tokens: number;
  total_output_tokens: number;
  total_cache_tokens: number;
  total_requests: number;
}

/** One entry per tool that has tokens or requests, by tool name, and the totals over them. */
export function byTool(
  tokens: ReadonlyArray<TokenFigures & { toolName: string }>,
  requests: ReadonlyMap<string, number>,
): { totals: Totals; tools: ToolFigures[] } {
  const byName = new Map(tokens.map((t) => [t.toolName, t]));
  const names = [...new Set([...byName.keys(), ...requests.keys()])].sort();
  const tools = names.map((name) => {
    const t = byName.get(name) ?? NONE;
    return {
      tool_name: name,
      tokens: t.tokens,
      input_tokens: t.inputTokens,
      output_tokens: t.outputTokens,
      cache_tokens: t.cacheTokens,
      requests: requests.get(name) ?? 0,
    };
  });
  const sum = (k: keyof Omit<ToolFigures, 'tool_name'>) => tools.reduce((a, t) => a + t[k], 0);
  return {
    totals: {
      total_tokens: sum('tokens'),
      total_input_tokens: sum('input_tokens'),
      total_output_tokens: sum('output_tokens'),
      total_cache_tokens: sum('cache_tokens'),
      total_requests: sum('requests'),
    },
    tools,
  };
}

export interface DayFigures {
  date: string;
  tokens: number;
  input_tokens: number;
  output_tokens: number;
  cache_tokens: number;
  requests: number;
}

/** Every day from `start` to `end` with its figures (zeros for days without usage). */
export function byDay(
  start: string,
  end: string,
  tokens: ReadonlyMap<string, TokenFigures>,
  requests: ReadonlyMap<string, number>,
): DayFigures[] {
  return eachDay(start, end).map((date) => {
    const t = tokens.get(date) ?? NONE;
    return {
      date,
      tokens: t.tokens,
      input_tokens: t.inputTokens,
      output_tokens: t.outputTokens,
      cache_tokens: t.cacheTokens,
      requests: requests.get(date) ?? 0,
    };
  });
}

/** Every day from `start` to `end` with its request count. */
export const requestsByDay = (start: string, end: string, requests: ReadonlyMap<string, number>) =>
  eachDay(start, end).map((date) => ({ date, requests: requests.get(date) ?? 0 }));

/** A map as a plain object with sorted keys ({tool: n}). */
export const sortedObject = (m: ReadonlyMap<string, number>): Record<string, number> =>
  Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
