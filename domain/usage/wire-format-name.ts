// The wire formats whose usage the proxy reads (the endpoint allow-list names one per endpoint, and
// the usage readers are chosen by it; its own file so the two modules do not import each other).
export type WireFormat =
  | 'openai-chat'
  | 'openai-responses'
  | 'openai-embeddings'
  | 'anthropic-messages'
  | 'gemini-generate';
