/**
 * Which headers cross the proxy, in each direction.
 *
 * Towards the provider: the caller's headers minus hop-by-hop headers and minus every credential the
 * caller could have sent (its proxy token travels as Authorization, x-api-key or x-goog-api-key
 * depending on the SDK; cookies could carry our own session), minus the headers that pick which
 * account the provider bills (a caller must not choose the organisation or project the tenant's key
 * is charged to), then the provider's own auth header.
 * Towards the caller: only the provider headers an SDK or CLI reads (RESPONSE_ALLOWED, below): the
 * body's framing and type, caching, the provider's request id, retry and rate-limit advice. Never a
 * cookie, never the provider's server internals (server, via, x-envoy-*, cf-*, organisation ids).
 */
import type { OutgoingHttpHeaders } from 'node:http';

/**
 * RFC 9110 §7.6.1 connection-specific headers, plus Host (set from the upstream URL) and Expect
 * (already answered by the server in front of us).
 */
const HOP_BY_HOP = new Set([
  'expect',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** Everything a caller might authenticate with or choose a billed account by; none of it reaches the provider. */
const CALLER_CREDENTIALS = new Set([
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'cookie',
  'ocp-apim-subscription-key',
  // Provider account selectors: OpenAI organisation and project, Google Cloud billing/quota project.
  'openai-organization',
  'openai-project',
  'x-goog-user-project',
]);

/**
 * Builds the upstream request headers from the caller's raw headers (name/value pairs, as
 * IncomingMessage.rawHeaders). `accept-encoding: identity` is forced so the usage tap reads plain bytes.
 */
export function requestHeadersForUpstream(
  rawHeaders: readonly string[],
  providerAuth: Readonly<Record<string, string>>,
): OutgoingHttpHeaders {
  const dropped = namedInConnection(rawHeaders);
  const headers: OutgoingHttpHeaders = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (HOP_BY_HOP.has(name) || CALLER_CREDENTIALS.has(name) || dropped?.has(name)) continue;
    const existing = headers[name];
    if (existing === undefined) headers[name] = rawHeaders[i + 1];
    else
      headers[name] = Array.isArray(existing)
        ? [...existing, rawHeaders[i + 1]]
        : [String(existing), rawHeaders[i + 1]];
  }
  headers['accept-encoding'] = 'identity';
  for (const name of Object.keys(providerAuth)) headers[name.toLowerCase()] = providerAuth[name];
  return headers;
}

/**
 * The provider response headers passed back (issue 25 item 6). content-length only when its value is
 * a plain number (forward.ts drops it where it rewrites the body); content-encoding because a provider
 * may compress regardless of our accept-encoding: identity, and the body is passed as it came.
 */
const RESPONSE_ALLOWED = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'cache-control',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'request-id',
  'x-request-id',
  'openai-processing-ms',
  'openai-version',
]);
/** Rate-limit advice of Anthropic (anthropic-ratelimit-*), OpenAI and others (x-ratelimit-*, ratelimit-*). */
const RESPONSE_ALLOWED_PREFIXES = ['anthropic-ratelimit-', 'x-ratelimit-', 'ratelimit-'];

function passedBack(name: string, value: string): boolean {
  if (name === 'content-length') return /^\d{1,15}$/.test(value.trim());
  return RESPONSE_ALLOWED.has(name) || RESPONSE_ALLOWED_PREFIXES.some((p) => name.startsWith(p));
}

/** Filters the provider's raw response headers into a flat name/value list for writeHead. */
export function responseHeadersForClient(rawHeaders: readonly string[]): string[] {
  const dropped = namedInConnection(rawHeaders);
  const headers: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (!passedBack(name, rawHeaders[i + 1]) || dropped?.has(name)) continue;
    headers.push(rawHeaders[i], rawHeaders[i + 1]);
  }
  return headers;
}

/** Headers listed in `Connection: a, b` are hop-by-hop too (RFC 9110 §7.6.1). */
function namedInConnection(rawHeaders: readonly string[]): Set<string> | undefined {
  let names: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length !== 10 || rawHeaders[i].toLowerCase() !== 'connection') continue;
    for (const token of rawHeaders[i + 1].split(',')) {
      const name = token.trim().toLowerCase();
      if (name === '' || name === 'close' || name === 'keep-alive') continue;
      names ??= new Set();
      names.add(name);
    }
  }
  return names;
}
