/**
 * The usage formats the proxy reads, and which one a proxied call speaks. Which endpoint speaks which
 * format is decided by the proxy's endpoint allow-list (domain/proxy/endpoints.ts), matched exactly on
 * the normalised path; there is no guessing from path suffixes here.
 */

import type { KeyProvider } from '../key-providers.ts';
import { matchEndpoint } from '../proxy/endpoints.ts';
import { normaliseProxyPath } from '../proxy/request-path.ts';
import { anthropicMessagesUsage } from './anthropic-messages.ts';
import { geminiUsage } from './gemini.ts';
import { openAiChatUsage } from './openai-chat.ts';
import { openAiEmbeddingsUsage } from './openai-embeddings.ts';
import { openAiResponsesUsage } from './openai-responses.ts';
import type { WireFormatUsage } from './stream-collector.ts';
import type { WireFormat } from './wire-format-name.ts';

/**
 * The usage format of an allowed endpoint at `path` (below the proxy prefix, query ignored), for
 * either method; null for endpoints without usage and for paths that are not allowed at all.
 */
export function detectWireFormat(provider: KeyProvider, path: string): WireFormat | null {
  const normalised = normaliseProxyPath(path);
  if (!normalised.ok) return null;
  for (const method of ['POST', 'GET']) {
    const found = matchEndpoint(provider, method, normalised.path.segments);
    if (found.kind === 'allowed' && found.endpoint.metering.kind === 'tokens')
      return found.endpoint.metering.format;
  }
  return null;
}

export const WIRE_FORMAT_USAGE: Record<WireFormat, WireFormatUsage> = {
  'openai-chat': openAiChatUsage,
  'openai-responses': openAiResponsesUsage,
  'openai-embeddings': openAiEmbeddingsUsage,
  'anthropic-messages': anthropicMessagesUsage,
  'gemini-generate': geminiUsage,
};
