/**
 * Gemini `models/<m>:generateContent` and `:streamGenerateContent`.
 *
 * `usageMetadata: {promptTokenCount, candidatesTokenCount, cachedContentTokenCount,
 *   thoughtsTokenCount, toolUsePromptTokenCount, totalTokenCount}` with `modelVersion` beside it.
 * The JSON is proto3-style, so zero counts are omitted: an absent count means 0, but an absent
 * usageMetadata means unknown.
 * Streaming sends one GenerateContentResponse per chunk, each with cumulative usageMetadata; the last
 * one is final. With `?alt=sse` the chunks are SSE `data:` events; without it the body is one JSON
 * array of the same objects (read by fromJson).
 */
import { jsonStringValueChars } from './estimate.ts';
import type { StreamUsageCollector, WireFormatUsage } from './stream-collector.ts';
import {
  buildUsage,
  isRecord,
  optionalTokenCount,
  parseJson,
  type UsageResult,
  usageMissing,
  usageOk,
} from './usage.ts';

function fromResponse(response: Record<string, unknown>, partial: boolean): UsageResult {
  const meta = response.usageMetadata;
  if (!isRecord(meta)) return usageMissing('response has no usageMetadata');
  return usageOk(
    buildUsage({
      inputTokens:
        optionalTokenCount(meta.promptTokenCount) + optionalTokenCount(meta.toolUsePromptTokenCount),
      outputTokens:
        optionalTokenCount(meta.candidatesTokenCount) + optionalTokenCount(meta.thoughtsTokenCount),
      cacheReadTokens: optionalTokenCount(meta.cachedContentTokenCount),
      model: response.modelVersion,
    }),
    partial,
  );
}

function fromJson(body: unknown): UsageResult {
  if (Array.isArray(body)) {
    // JSON-array streaming form: the last element that reports usage is the final count.
    for (let i = body.length - 1; i >= 0; i--) {
      const item = body[i];
      if (isRecord(item) && isRecord(item.usageMetadata)) return fromResponse(item, false);
    }
    return usageMissing('no element of the streamed array has usageMetadata');
  }
  if (!isRecord(body)) return usageMissing('response body is not a JSON object');
  return fromResponse(body, false);
}

function streamCollector(): StreamUsageCollector {
  let lastWithUsage: string | undefined;
  return {
    onEvent(_event, data) {
      if (data.includes('"usageMetadata"')) lastWithUsage = data;
    },
    result() {
      if (lastWithUsage === undefined) return usageMissing('stream carried no usageMetadata');
      const parsed = parseJson(lastWithUsage);
      if (!isRecord(parsed)) return usageMissing('usage chunk is not valid JSON');
      // The final chunk also carries the finish reason; earlier chunks' counts are running totals.
      return fromResponse(parsed, !lastWithUsage.includes('"finishReason"'));
    },
  };
}

const GENERATED = ['text'];

export const geminiUsage: WireFormatUsage = {
  fromJson,
  streamCollector,
  outputChars: (_event, data) => jsonStringValueChars(data, GENERATED),
};
