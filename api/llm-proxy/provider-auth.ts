import type { KeyProvider } from '../../domain/key-providers.ts';

/** The header each provider reads its API key from. */
export function providerAuthHeaders(provider: KeyProvider, apiKey: string): Record<string, string> {
  switch (provider) {
    case 'openai':
      return { authorization: `Bearer ${apiKey}` };
    case 'anthropic':
      return { 'x-api-key': apiKey };
    case 'gemini':
      return { 'x-goog-api-key': apiKey };
  }
}
