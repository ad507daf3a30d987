// The class of a model provider's error response, read from its HTTP status and its JSON error
// envelope only (pure). The model proxy (api/routes/remote/llm-proxy.ts) classifies every error it
// relays and records the class on the caller's agent session, so the autonomous runner can tell a
// context overflow or an exhausted billing quota from a plain CLI failure (spec document 2 "Errors" 4:
// structured errors and error envelopes, never text scanning of normal output).
//
// This reads the provider's ERROR ENVELOPE, never a model's answer: a success response (2xx) is never
// passed here. Anthropic has no dedicated code for an over-long prompt: it answers 400
// `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: N tokens > M
// maximum"}}`, so for that one case the envelope's `message` field is checked with startsWith (its
// documented, fixed prefix). Everything else is exact codes and statuses. No regular expressions.
//
// Shapes:
//   OpenAI and compatible: {"error":{"message","type","param","code"}}: `context_length_exceeded`,
//     `insufficient_quota` (429, billing), `rate_limit_exceeded` (429), `invalid_api_key` (401).
//   Anthropic: {"type":"error","error":{"type","message"}}: invalid_request_error (400),
//     authentication_error (401), permission_error (403), billing_error (402), rate_limit_error (429),
//     api_error (500: server_error, like every other 5xx), overloaded_error (529); an exhausted prepaid credit is 400 invalid_request_error
//     "Your credit balance is too low ..." (message prefix, like the over-long prompt).
// Gemini (400 INVALID_ARGUMENT with a token-limit message) is not classified as an overflow: its
// message text is not documented as stable, so it falls to `other`.

export type ProviderErrorClass =
  | 'context_overflow'
  | 'rate_limited'
  | 'overloaded'
  | 'server_error'
  | 'hard_quota'
  | 'auth'
  | 'other';

export const PROVIDER_ERROR_CLASSES: readonly ProviderErrorClass[] = [
  'context_overflow',
  'rate_limited',
  'overloaded',
  'server_error',
  'hard_quota',
  'auth',
  'other',
];

/** Bodies larger than this are not parsed (classified from the status alone). */
export const MAX_CLASSIFIED_BODY = 64 * 1024;

const OVERFLOW_CODES = new Set(['context_length_exceeded', 'model_context_window_exceeded']);
const HARD_QUOTA_CODES = new Set([
  'insufficient_quota',
  'billing_hard_limit_reached',
  'billing_not_active',
  'billing_error',
]);
const AUTH_CODES = new Set(['invalid_api_key', 'authentication_error', 'permission_error']);
const RATE_CODES = new Set(['rate_limit_exceeded', 'rate_limit_error']);
const OVERLOAD_CODES = new Set(['overloaded_error']);
/** Anthropic's over-long prompt (400 invalid_request_error), its message's fixed prefix. */
const ANTHROPIC_TOO_LONG_PREFIX = 'prompt is too long';
/** Anthropic's exhausted prepaid credit (400 invalid_request_error), its message's fixed prefix. */
const ANTHROPIC_NO_CREDIT_PREFIX = 'Your credit balance is too low';

interface Envelope {
  type: string;
  code: string;
  message: string;
}

function field(v: unknown): string {
  return typeof v === 'string' ? v.slice(0, 200) : '';
}

/** The `error` object of a JSON error body, as short strings; empty fields when absent or unparsable. */
export function readEnvelope(body: string | Buffer): Envelope {
  const empty = { type: '', code: '', message: '' };
  if (body.length === 0 || body.length > MAX_CLASSIFIED_BODY) return empty;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return empty;
  }
  if (!parsed || typeof parsed !== 'object') return empty;
  const error = (parsed as { error?: unknown }).error;
  if (!error || typeof error !== 'object') return empty;
  const e = error as Record<string, unknown>;
  return { type: field(e.type), code: field(e.code), message: field(e.message) };
}

export function classifyProviderError(status: number, body: string | Buffer): ProviderErrorClass {
  const { type, code, message } = readEnvelope(body);
  if (OVERFLOW_CODES.has(code)) return 'context_overflow';
  if (status === 400 && type === 'invalid_request_error' && message.startsWith(ANTHROPIC_TOO_LONG_PREFIX))
    return 'context_overflow';
  if (status === 400 && type === 'invalid_request_error' && message.startsWith(ANTHROPIC_NO_CREDIT_PREFIX))
    return 'hard_quota';
  if (HARD_QUOTA_CODES.has(code) || HARD_QUOTA_CODES.has(type) || status === 402) return 'hard_quota';
  if (AUTH_CODES.has(code) || AUTH_CODES.has(type) || status === 401 || status === 403) return 'auth';
  if (RATE_CODES.has(code) || RATE_CODES.has(type) || status === 429) return 'rate_limited';
  if (OVERLOAD_CODES.has(type) || status === 529 || status === 503) return 'overloaded';
  // Any other 5xx (Anthropic api_error 500, gateways' 502/504): a transient API error (spec "Errors" 4).
  if (status >= 500 && status <= 599) return 'server_error';
  return 'other';
}
