/**
 * OpenAI Responses API (`POST /responses`).
 *
 * Non-streaming: the response object carries `usage: {input_tokens, output_tokens, total_tokens,
 *   input_tokens_details: {cached_tokens}, output_tokens_details: {reasoning_tokens}}`.
 * Streaming: only the terminal event (`response.completed`, `response.incomplete` or
 * `response.failed`) carries `response.usage`; it is the one event parsed.
 */
import { jsonStringValueChars } from './estimate.ts';
import type { StreamUsageCollector, WireFormatUsage } from './stream-collector.ts';
import {
  buildUsage,
  isRecord,
  optionalTokenCount,
  parseJson,
  sniffEventType,
  tokenCount,
  type UsageResult,
  usageMissing,
  usageOk,
} from './usage.ts';

const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

function fromJson(body: unknown): UsageResult {
  if (!isRecord(body)) return usageMissing('response body is not a JSON object');
  const usage = body.usage;
  if (!isRecord(usage)) return usageMissing('response has no usage object');
  const input = tokenCount(usage.input_tokens);
  const output = tokenCount(usage.output_tokens);
  if (input === undefined || output === undefined) {
    return usageMissing('usage lacks input_tokens or output_tokens');
  }
  const details = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
  return usageOk(
    buildUsage({
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: optionalTokenCount(details.cached_tokens),
      cacheWriteTokens: optionalTokenCount(details.cache_write_tokens),
      model: body.model,
    }),
  );
}

function streamCollector(): StreamUsageCollector {
  let terminal: string | undefined;
  return {
    onEvent(event, data) {
      // Cheap test first: the event name; the payload is only sniffed when the name is absent.
      const type = event ?? sniffEventType(data);
      if (type !== undefined && TERMINAL_EVENTS.has(type)) terminal = data;
    },
    result() {
      if (terminal === undefined) return usageMissing('stream ended without a terminal response event');
      const parsed = parseJson(terminal);
      if (!isRecord(parsed)) return usageMissing('terminal response event is not valid JSON');
      return fromJson(parsed.response);
    },
  };
}

const GENERATED = ['delta'];

export const openAiResponsesUsage: WireFormatUsage = {
  fromJson,
  streamCollector,
  // Only `*.delta` events: the `*.done` events and the terminal response repeat the whole text.
  outputChars: (event, data) => {
    const type = event ?? sniffEventType(data);
    return type?.endsWith('.delta') ? jsonStringValueChars(data, GENERATED) : 0;
  },
};
