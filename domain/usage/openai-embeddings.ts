/**
 * OpenAI Embeddings (`POST /embeddings`, also Gemini's OpenAI-compatible `/openai/embeddings`).
 *
 * `usage: {prompt_tokens, total_tokens}` on the body; every token is input (there is no output).
 * Embeddings are never streamed, so a stream carries no usage.
 */
import type { StreamUsageCollector, WireFormatUsage } from './stream-collector.ts';
import { buildUsage, isRecord, tokenCount, type UsageResult, usageMissing, usageOk } from './usage.ts';

function fromJson(body: unknown): UsageResult {
  if (!isRecord(body)) return usageMissing('response body is not a JSON object');
  const usage = body.usage;
  if (!isRecord(usage)) return usageMissing('response has no usage object');
  const prompt = tokenCount(usage.prompt_tokens) ?? tokenCount(usage.total_tokens);
  if (prompt === undefined) return usageMissing('usage lacks prompt_tokens');
  return usageOk(buildUsage({ inputTokens: prompt, outputTokens: 0, model: body.model }));
}

function streamCollector(): StreamUsageCollector {
  return {
    onEvent() {},
    result: () => usageMissing('embeddings are not streamed'),
  };
}

export const openAiEmbeddingsUsage: WireFormatUsage = { fromJson, streamCollector, outputChars: () => 0 };
