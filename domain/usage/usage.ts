/**
 * Normalised token usage of one model call, the same shape for every provider.
 *
 * Conventions (chosen so numbers compare across providers and add up for quotas):
 * - inputTokens counts every prompt token the provider processed, including cache reads and cache
 *   writes (OpenAI and Gemini report it that way; Anthropic's input_tokens excludes them, so they are
 *   added back).
 * - cacheReadTokens and cacheWriteTokens are the parts of inputTokens served from / written to a cache.
 * - outputTokens counts every generated token, including reasoning/thinking tokens.
 * - totalTokens = inputTokens + outputTokens.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
  model?: string;
  /** The provider reported no usage: the counts are estimate.ts's tokenizer-free estimate. */
  estimated?: true;
}

/**
 * What a parser could read. Usage that could not be read is `null` with a reason, never zeros.
 * `partial` means the stream ended before the provider's final usage report (for example the client
 * disconnected), so the counts are a lower bound.
 */
export type UsageResult =
  | { usage: Usage; partial: boolean }
  | {
      usage: null;
      reason: string;
      /** A stream without usage: characters of the text it generated, for an estimate (estimate.ts). */
      outputChars?: number;
    };

export function usageOk(usage: Usage, partial = false): UsageResult {
  return { usage, partial };
}

export function usageMissing(reason: string): UsageResult {
  return { usage: null, reason };
}

export function buildUsage(parts: {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  model?: unknown;
}): Usage {
  const usage: Usage = {
    inputTokens: parts.inputTokens,
    outputTokens: parts.outputTokens,
    cacheReadTokens: parts.cacheReadTokens ?? 0,
    cacheWriteTokens: parts.cacheWriteTokens ?? 0,
    totalTokens: parts.inputTokens + parts.outputTokens,
  };
  if (typeof parts.model === 'string' && parts.model.length > 0) usage.model = parts.model;
  return usage;
}

/** A token count: a non-negative safe integer, or undefined. */
export function tokenCount(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
}

/** A token count whose absence means zero (optional detail fields, proto3 JSON omitting zeros). */
export function optionalTokenCount(value: unknown): number {
  return tokenCount(value) ?? 0;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON.parse that reports failure as undefined instead of throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The `type` field of an SSE data payload when the stream omits the `event:` line. Providers put
 * `type` first, so only the start of the payload is looked at (cheap on large deltas).
 */
export function sniffEventType(data: string): string | undefined {
  return /^\s*\{\s*"type"\s*:\s*"([^"]+)"/.exec(data.slice(0, 120))?.[1];
}
