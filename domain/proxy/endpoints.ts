/**
 * The model proxy's endpoint allow-list: for each provider, the method + path patterns it forwards
 * and how each is metered. Anything not listed answers 404 `proxy_error`; nothing is forwarded on a
 * guess. Every forwarded call reserves one request against the user's and tenant's quotas first (so
 * an exhausted quota refuses every endpoint with 429) and counts as one request when the provider
 * answers 2xx; `tokens` endpoints also add the tokens read from the response.
 *
 * Paths are matched on the normalised path (request-path.ts), exactly and case-sensitively, segment by
 * segment; an optional leading version segment of the provider (below) may precede each pattern
 * (the base URL may or may not carry it). `{model}` is one segment of letters, digits, `.`, `_`, `-`
 * (OpenAI ids also `:`); in Gemini's `{model}:method` the method part is a literal. `/**` matches the
 * prefix and everything below it.
 *
 * | provider | version prefix | method | path | metering |
 * |---|---|---|---|---|
 * | openai (`<provider_a>`) | `/v1` optional | POST | `/chat/completions` | tokens (usage; streams: `include_usage` added) |
 * | | | POST | `/completions` | tokens |
 * | | | POST | `/responses` | tokens |
 * | | | POST | `/embeddings` | tokens (`usage.prompt_tokens`) |
 * | | | GET | `/models`, `/models/{model}` | request only |
 * | | | any | `/batches/**`, `/files/**`, `/uploads/**` | refused (403) |
 * | anthropic (`<provider_b>`) | `/v1` optional | POST | `/messages` | tokens |
 * | | | POST | `/messages/count_tokens` | request only |
 * | | | POST | `/chat/completions` (OpenAI-compatible) | tokens (streams: `include_usage` added) |
 * | | | GET | `/models`, `/models/{model}` | request only |
 * | | | any | `/messages/batches/**`, `/files/**` | refused (403) |
 * | gemini (`<provider_c>`) | `/v1beta`, `/v1` or `/v1alpha` optional | POST | `/models/{model}:generateContent`, `:streamGenerateContent` | tokens (`usageMetadata`) |
 * | | | POST | `/models/{model}:countTokens`, `:embedContent`, `:batchEmbedContents` | request only (no usage reported) |
 * | | | POST | `/openai/chat/completions` (OpenAI-compatible) | tokens (streams: `include_usage` added) |
 * | | | POST | `/openai/embeddings` | tokens |
 * | | | GET | `/models`, `/models/{model}` | request only |
 * | | | any | `/models/{model}:batchGenerateContent`, `:asyncBatchEmbedContent`, `/batches/**`, `/files/**` | refused (403) |
 *
 * Why batches and files are refused rather than metered: a batch is accepted at once and run later,
 * its tokens are known only when its results are fetched (hours later, possibly by another client or
 * never), so the quota cannot be checked or charged when it matters; uploaded files exist to feed
 * batches (and would let a session stash data at the provider under the tenant's key).
 */
import type { KeyProvider } from '../key-providers.ts';
import type { WireFormat } from '../usage/wire-format-name.ts';

export type Metering =
  | { kind: 'tokens'; format: WireFormat }
  | { kind: 'request' }
  | { kind: 'refused'; message: string };

export interface ProxyEndpoint {
  /** The pattern as documented above (for logs and the refusal message). */
  pattern: string;
  metering: Metering;
  /**
   * OpenAI-format chat completions: a streamed body gets `stream_options.include_usage` so the
   * provider reports usage (see stream-usage-option.ts).
   */
  addsStreamUsage: boolean;
}

export type EndpointMatch =
  | { kind: 'allowed'; endpoint: ProxyEndpoint }
  | { kind: 'refused'; endpoint: ProxyEndpoint; message: string }
  | { kind: 'unknown' };

type Method = 'GET' | 'POST' | '*';

interface Rule {
  method: Method;
  /** Pattern segments: literals, `{model}`, `{model}:<method>`, or a final `**`. */
  segments: string[];
  endpoint: ProxyEndpoint;
}

const BATCH_REFUSAL =
  'Batch and file endpoints are not available through the proxy: their usage is only known long after the call, so it cannot be checked against the quota';

const tokens = (format: WireFormat) => ({ kind: 'tokens', format }) as const;
const REQUEST_ONLY = { kind: 'request' } as const;
const REFUSED = { kind: 'refused', message: BATCH_REFUSAL } as const;

function rules(list: Array<[Method, string, Metering]>): Rule[] {
  return list.map(([method, pattern, metering]) => ({
    method,
    segments: pattern.slice(1).split('/'),
    endpoint: {
      pattern,
      metering,
      addsStreamUsage:
        metering.kind === 'tokens' &&
        metering.format === 'openai-chat' &&
        pattern.endsWith('/chat/completions'),
    },
  }));
}

const TABLE: Readonly<Record<KeyProvider, { versions: readonly string[]; rules: Rule[] }>> = {
  openai: {
    versions: ['v1'],
    rules: rules([
      ['POST', '/chat/completions', tokens('openai-chat')],
      ['POST', '/completions', tokens('openai-chat')],
      ['POST', '/responses', tokens('openai-responses')],
      ['POST', '/embeddings', tokens('openai-embeddings')],
      ['GET', '/models', REQUEST_ONLY],
      ['GET', '/models/{model}', REQUEST_ONLY],
      ['*', '/batches/**', REFUSED],
      ['*', '/files/**', REFUSED],
      ['*', '/uploads/**', REFUSED],
    ]),
  },
  anthropic: {
    versions: ['v1'],
    rules: rules([
      ['POST', '/messages', tokens('anthropic-messages')],
      ['POST', '/messages/count_tokens', REQUEST_ONLY],
      ['POST', '/chat/completions', tokens('openai-chat')],
      ['GET', '/models', REQUEST_ONLY],
      ['GET', '/models/{model}', REQUEST_ONLY],
      ['*', '/messages/batches/**', REFUSED],
      ['*', '/files/**', REFUSED],
    ]),
  },
  gemini: {
    versions: ['v1beta', 'v1', 'v1alpha'],
    rules: rules([
      ['POST', '/models/{model}:generateContent', tokens('gemini-generate')],
      ['POST', '/models/{model}:streamGenerateContent', tokens('gemini-generate')],
      ['POST', '/models/{model}:countTokens', REQUEST_ONLY],
      ['POST', '/models/{model}:embedContent', REQUEST_ONLY],
      ['POST', '/models/{model}:batchEmbedContents', REQUEST_ONLY],
      ['POST', '/openai/chat/completions', tokens('openai-chat')],
      ['POST', '/openai/embeddings', tokens('openai-embeddings')],
      ['GET', '/models', REQUEST_ONLY],
      ['GET', '/models/{model}', REQUEST_ONLY],
      ['*', '/models/{model}:batchGenerateContent', REFUSED],
      ['*', '/models/{model}:asyncBatchEmbedContent', REFUSED],
      ['*', '/batches/**', REFUSED],
      ['*', '/files/**', REFUSED],
    ]),
  },
};

/** The table as data (for documentation and tests): method, pattern and metering of every rule. */
export function endpointTable(
  provider: KeyProvider,
): Array<{ method: Method; pattern: string; metering: Metering; versions: readonly string[] }> {
  const table = TABLE[provider];
  return table.rules.map((r) => ({
    method: r.method,
    pattern: r.endpoint.pattern,
    metering: r.endpoint.metering,
    versions: table.versions,
  }));
}

/** Looks up a call: `segments` are the normalised path's (request-path.ts), without the prefix. */
export function matchEndpoint(
  provider: KeyProvider,
  method: string,
  segments: readonly string[],
): EndpointMatch {
  const table = TABLE[provider];
  if (table === undefined) return { kind: 'unknown' };
  const start = segments.length > 0 && table.versions.includes(segments[0]!) ? 1 : 0;
  for (const rule of table.rules) {
    if (!segmentsMatch(rule.segments, segments, start, provider)) continue;
    const m = rule.endpoint.metering;
    if (m.kind === 'refused') return { kind: 'refused', endpoint: rule.endpoint, message: m.message };
    if (rule.method === method) return { kind: 'allowed', endpoint: rule.endpoint };
  }
  return { kind: 'unknown' };
}

/**
 * The endpoint a stored base URL names itself (the bare `POST /api/remote/llm-proxy`): the longest
 * trailing run of its path segments that is an allowed POST endpoint. The base URL is configuration,
 * not caller input, and may carry a gateway prefix (`/openai/v1/chat/completions`).
 */
export function matchBareEndpoint(provider: KeyProvider, basePath: string): EndpointMatch {
  const segments = basePath.split('/').filter((s) => s !== '');
  for (let i = 0; i < segments.length; i++) {
    const found = matchEndpoint(provider, 'POST', segments.slice(i));
    if (found.kind !== 'unknown') return found;
  }
  return { kind: 'unknown' };
}

function segmentsMatch(
  pattern: readonly string[],
  path: readonly string[],
  start: number,
  provider: KeyProvider,
): boolean {
  const wildcard = pattern[pattern.length - 1] === '**';
  const fixed = wildcard ? pattern.length - 1 : pattern.length;
  const available = path.length - start;
  if (wildcard ? available < fixed : available !== fixed) return false;
  for (let i = 0; i < fixed; i++) {
    if (!segmentMatches(pattern[i]!, path[start + i]!, provider)) return false;
  }
  return true;
}

const MODEL = '{model}';

function segmentMatches(pattern: string, segment: string, provider: KeyProvider): boolean {
  if (!pattern.startsWith(MODEL)) return pattern === segment;
  if (pattern === MODEL) return isModelName(segment, provider === 'openai');
  // `{model}:<method>`: the method is the literal after the model's colon.
  const suffix = pattern.slice(MODEL.length);
  return (
    segment.length > suffix.length &&
    segment.endsWith(suffix) &&
    isModelName(segment.slice(0, segment.length - suffix.length), false)
  );
}

/** 1-128 of `A-Z a-z 0-9 . _ -` (plus `:` where ids carry it, e.g. OpenAI fine-tunes). */
export function isModelName(value: string, allowColon: boolean): boolean {
  if (value.length === 0 || value.length > 128) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const ok =
      (c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      c === 0x2e ||
      c === 0x5f ||
      c === 0x2d ||
      (allowColon && c === 0x3a);
    if (!ok) return false;
  }
  return true;
}
