/**
 * Which usage format a proxied call speaks, from the provider and the request path.
 *
 * Each provider lists the endpoints that report usage. Anthropic and Gemini also serve an
 * OpenAI-compatible `/chat/completions`, so that path is metered for them too. Any other path
 * (model listings, token counting, files) has no usage: detectWireFormat returns null.
 */
import type { KeyProvider } from '../key-providers.ts';
import { anthropicMessagesUsage } from './anthropic-messages.ts';
import { geminiUsage } from './gemini.ts';
import { openAiChatUsage } from './openai-chat.ts';
import { openAiResponsesUsage } from './openai-responses.ts';
import type { WireFormatUsage } from './stream-collector.ts';

export type WireFormat = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini-generate';

const OPENAI_CHAT = /\/(?:chat\/)?completions$/;
const OPENAI_RESPONSES = /\/responses$/;
const ANTHROPIC_MESSAGES = /\/messages$/;
// Google clients send the colon literally; tolerate it percent-encoded too.
const GEMINI_GENERATE = /(?::|%3A)(?:stream)?generateContent$/i;

const ENDPOINTS: Record<KeyProvider, ReadonlyArray<readonly [RegExp, WireFormat]>> = {
  openai: [
    [OPENAI_CHAT, 'openai-chat'],
    [OPENAI_RESPONSES, 'openai-responses'],
  ],
  anthropic: [
    [ANTHROPIC_MESSAGES, 'anthropic-messages'],
    [OPENAI_CHAT, 'openai-chat'],
  ],
  gemini: [
    [GEMINI_GENERATE, 'gemini-generate'],
    [OPENAI_CHAT, 'openai-chat'],
  ],
};

/** `path` is the request path as the client sent it below the proxy prefix; a query string is ignored. */
export function detectWireFormat(provider: KeyProvider, path: string): WireFormat | null {
  const query = path.indexOf('?');
  const pathname = (query === -1 ? path : path.slice(0, query)).replace(/\/+$/, '');
  for (const [pattern, format] of ENDPOINTS[provider] ?? []) {
    if (pattern.test(pathname)) return format;
  }
  return null;
}

export const WIRE_FORMAT_USAGE: Record<WireFormat, WireFormatUsage> = {
  'openai-chat': openAiChatUsage,
  'openai-responses': openAiResponsesUsage,
  'anthropic-messages': anthropicMessagesUsage,
  'gemini-generate': geminiUsage,
};
