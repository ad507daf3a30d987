/**
 * OpenAI Chat Completions (and legacy Completions, which share the usage shape).
 *
 * Non-streaming: `usage: {prompt_tokens, completion_tokens, total_tokens,
 *   prompt_tokens_details?: {cached_tokens}}` on the body.
 * Streaming: usage arrives only when the request set `stream_options.include_usage`, in one extra
 * chunk before `data: [DONE]` (empty `choices`); every other chunk has `"usage": null`. Some
 * compatible servers repeat cumulative usage on every chunk: the last one wins either way.
 */
import { jsonStringValueChars } from './estimate.ts';
import type { StreamUsageCollector, WireFormatUsage } from './stream-collector.ts';
import {
  buildUsage,
  isRecord,
  optionalTokenCount,
  parseJson,
  tokenCount,
  type UsageResult,
  usageMissing,
  usageOk,
} from './usage.ts';

/** Matches a usage object (not `"usage": null`). Escaped quotes inside strings cannot match. */
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

function fromJson(body: unknown): UsageResult {
  if (!isRecord(body)) return usageMissing('response body is not a JSON object');
  const usage = body.usage;
  if (!isRecord(usage)) return usageMissing('response has no usage object');
  const prompt = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  if (prompt === undefined || completion === undefined) {
    return usageMissing('usage lacks prompt_tokens or completion_tokens');
  }
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  return usageOk(
    buildUsage({
      inputTokens: prompt,
      outputTokens: completion,
      cacheReadTokens: optionalTokenCount(details.cached_tokens),
      // Not reported by OpenAI itself; some compatible gateways do.
      cacheWriteTokens: optionalTokenCount(details.cache_write_tokens),
      model: body.model,
    }),
  );
}

function streamCollector(): StreamUsageCollector {
  let lastUsageChunk: string | undefined;
  return {
    onEvent(_event, data) {
      if (USAGE_OBJECT.test(data)) lastUsageChunk = data;
    },
    result() {
      if (lastUsageChunk === undefined) {
        return usageMissing(
          'stream carried no usage chunk (stream_options.include_usage not set, or cut short)',
        );
      }
      return fromJson(parseJson(lastUsageChunk));
    },
  };
}

const GENERATED = ['content', 'arguments', 'reasoning_content', 'refusal'];

export const openAiChatUsage: WireFormatUsage = {
  fromJson,
  streamCollector,
  outputChars: (_event, data) => jsonStringValueChars(data, GENERATED),
};
