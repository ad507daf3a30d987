import type { UsageResult } from './usage.ts';

/**
 * Receives every SSE event of one streamed response and reports its usage at the end.
 * Implementations should only remember the few events that carry usage (as raw strings) and parse
 * them in `result()`, so the per-event cost stays a substring check.
 */
export interface StreamUsageCollector {
  onEvent(event: string | undefined, data: string): void;
  result(): UsageResult;
}

/** Usage reader for one wire format: a whole JSON body, or a stream of SSE events. */
export interface WireFormatUsage {
  fromJson(body: unknown): UsageResult;
  streamCollector(): StreamUsageCollector;
  /**
   * Characters of generated text (text, tool-call arguments, reasoning) one SSE event carries, for an
   * estimate when the stream ends without usage (estimate.ts). A substring scan, no JSON parsing.
   */
  outputChars(event: string | undefined, data: string): number;
}
