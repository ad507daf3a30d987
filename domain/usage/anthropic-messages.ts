/**
 * Anthropic Messages (`POST /v1/messages`).
 *
 * Usage object: `{input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens}`,
 * where input_tokens excludes both cache fields (so they are added back for Usage.inputTokens).
 * Non-streaming: on the message body.
 * Streaming: `message_start` carries `message.usage` (input and cache counts, output_tokens is a
 * placeholder); each `message_delta` carries cumulative `usage` (always output_tokens, sometimes the
 * input/cache fields too). Final usage = message_start usage overlaid with the last message_delta's.
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

function usageFrom(usage: Record<string, unknown>, model: unknown, partial: boolean): UsageResult {
  const input = tokenCount(usage.input_tokens);
  const output = tokenCount(usage.output_tokens);
  if (input === undefined || output === undefined) {
    return usageMissing('usage lacks input_tokens or output_tokens');
  }
  const cacheWrite = optionalTokenCount(usage.cache_creation_input_tokens);
  const cacheRead = optionalTokenCount(usage.cache_read_input_tokens);
  return usageOk(
    buildUsage({
      inputTokens: input + cacheWrite + cacheRead,
      outputTokens: output,
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
      model,
    }),
    partial,
  );
}

function fromJson(body: unknown): UsageResult {
  if (!isRecord(body)) return usageMissing('response body is not a JSON object');
  if (!isRecord(body.usage)) return usageMissing('response has no usage object');
  return usageFrom(body.usage, body.model, false);
}

function streamCollector(): StreamUsageCollector {
  let start: string | undefined;
  let lastDelta: string | undefined;
  return {
    onEvent(event, data) {
      const type = event ?? sniffEventType(data);
      if (type === 'message_start') start = data;
      else if (type === 'message_delta') lastDelta = data;
    },
    result() {
      if (start === undefined) return usageMissing('stream ended without message_start');
      const startEvent = parseJson(start);
      const message = isRecord(startEvent) ? startEvent.message : undefined;
      if (!isRecord(message) || !isRecord(message.usage)) return usageMissing('message_start has no usage');
      const merged: Record<string, unknown> = { ...message.usage };
      if (lastDelta !== undefined) {
        const delta = parseJson(lastDelta);
        if (isRecord(delta) && isRecord(delta.usage)) {
          for (const [field, value] of Object.entries(delta.usage)) {
            if (value !== null && value !== undefined) merged[field] = value;
          }
        }
      }
      // Without a message_delta the output count is message_start's placeholder: a lower bound.
      return usageFrom(merged, message.model, lastDelta === undefined);
    },
  };
}

const GENERATED = ['text', 'partial_json', 'thinking'];

export const anthropicMessagesUsage: WireFormatUsage = {
  fromJson,
  streamCollector,
  // Only deltas: message_start and content_block_start carry empty or repeated text.
  outputChars: (event, data) =>
    (event ?? sniffEventType(data)) === 'content_block_delta' ? jsonStringValueChars(data, GENERATED) : 0,
};
