import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeyProvider } from '../../domain/key-providers.ts';
import { detectWireFormat } from '../../domain/usage/wire-format.ts';
import type { WireFormat } from '../../domain/usage/wire-format-name.ts';

describe('detectWireFormat', () => {
  const cases: Array<[KeyProvider, string, WireFormat | null]> = [
    ['openai', '/chat/completions', 'openai-chat'],
    ['openai', '/v1/chat/completions', 'openai-chat'],
    // Exact matching on the normalised path: no trailing slash, no other case, no suffix match.
    ['openai', '/v1/chat/completions/', null],
    ['openai', '/v1/chat/Completions', null],
    ['openai', '/v1/chat/completion%73', 'openai-chat'],
    ['openai', '/v1/x/chat/completions', null],
    ['openai', '/v1/completions', 'openai-chat'],
    ['openai', '/v1/responses', 'openai-responses'],
    ['openai', '/responses?stream=true', 'openai-responses'],
    ['openai', '/v1/models', null],
    ['openai', '/v1/embeddings', 'openai-embeddings'],
    ['gemini', '/v1beta/openai/embeddings', 'openai-embeddings'],
    ['openai', '/v1/messages', null],
    ['anthropic', '/v1/messages', 'anthropic-messages'],
    ['anthropic', '/v1/messages?beta=true', 'anthropic-messages'],
    ['anthropic', '/v1/messages/count_tokens', null],
    ['anthropic', '/v1/chat/completions', 'openai-chat'],
    ['anthropic', '/v1/models', null],
    ['gemini', '/v1beta/models/gemini-2.5-flash:generateContent', 'gemini-generate'],
    ['gemini', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', 'gemini-generate'],
    ['gemini', '/v1beta/models/gemini-2.5-flash%3AstreamGenerateContent', 'gemini-generate'],
    ['gemini', '/v1beta/models/gemini-2.5-flash:countTokens', null],
    ['gemini', '/v1beta/openai/chat/completions', 'openai-chat'],
    ['gemini', '/v1beta/models', null],
  ];
  for (const [provider, path, expected] of cases) {
    it(`${provider} ${path} -> ${expected}`, () => assert.equal(detectWireFormat(provider, path), expected));
  }
});
