/**
 * Which headers cross the proxy, in each direction.
 *
 * Towards the provider: the caller's headers minus hop-by-hop headers and minus every credential the
 * caller could have sent (its proxy token travels as Authorization, x-api-key or x-goog-api-key
 * depending on the SDK; cookies could carry our own session), minus the headers that pick which
 * account the provider bills (a caller must not choose the organisation or project the tenant's key
 * is charged to), then the provider's own auth header.
 * Towards the caller: the provider's headers minus hop-by-hop headers.
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

/** Filters the provider's raw response headers into a flat name/value list for writeHead. */
export function responseHeadersForClient(rawHeaders: readonly string[]): string[] {
  const dropped = namedInConnection(rawHeaders);
  const headers: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (HOP_BY_HOP.has(name) || dropped?.has(name)) continue;
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
