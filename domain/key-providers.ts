// The model providers a stored API key can belong to: the spec's `<provider_a>` (OpenAI-compatible),
// `<provider_b>` (Claude family) and `<provider_c>` (Gemini family).
export const KEY_PROVIDERS = ['openai', 'anthropic', 'gemini'] as const;
export type KeyProvider = (typeof KEY_PROVIDERS)[number];
