// The model providers a stored API key can belong to: the spec's `<provider_a>` (OpenAI-compatible),
// `<provider_b>` (Claude family) and `<provider_c>` (Gemini family).
export const KEY_PROVIDERS = ['openai', 'anthropic', 'gemini'] as const;
export type KeyProvider = (typeof KEY_PROVIDERS)[number];

export const isKeyProvider = (value: unknown): value is KeyProvider =>
  typeof value === 'string' && (KEY_PROVIDERS as readonly string[]).includes(value);

/**
 * Where a provider's API lives when its stored key has no base_url. Paths the clients send are joined
 * to it (a version segment the client repeats, such as OpenAI's /v1, is used once).
 */
export const DEFAULT_PROVIDER_BASE_URLS: Readonly<Record<KeyProvider, string>> = Object.freeze({
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
});
