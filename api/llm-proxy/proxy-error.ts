import type { ServerResponse } from 'node:http';

/**
 * Error types the proxy itself answers with. Provider errors pass through (with any echo of the stored
 * key removed, see key-echo.ts) and never use these types, so a caller can tell "the provider said no"
 * from "the proxy could not get there".
 * - upstream_error: the provider could not be reached, reset the connection or timed out.
 * - config_error: the stored provider configuration is unusable (spec: also "no key configured").
 * - proxy_error: the request cannot be forwarded as sent, or the proxy cancelled it.
 * - proxy_auth_error: the proxy token is missing, invalid, expired, revoked, or its session, user or
 *   tenant may no longer use it (401 / 403).
 * - quota_exceeded: a user or tenant quota has no room (429).
 * - quota_check_failed: the quota could not be checked, so the call is refused (fail closed, 503).
 * - egress_denied: the key was stored by a tenant administrator and its base URL is, or resolves to, a
 *   loopback, private, link-local or metadata address not on egress.allow_hosts (403: a policy
 *   refusal that retrying cannot fix; SDKs do not retry 4xx).
 * - content_filtered: the prompt matched an enabled `block` rule of the tenant's content filter (403).
 */
export type ProxyErrorType =
  | 'upstream_error'
  | 'config_error'
  | 'proxy_error'
  | 'proxy_auth_error'
  | 'quota_exceeded'
  | 'quota_check_failed'
  | 'egress_denied'
  | 'content_filtered';

/** Writes `{error: {message, type}}` (the OpenAI-style shape the spec uses for proxy errors). */
export function sendProxyError(
  res: ServerResponse,
  status: number,
  type: ProxyErrorType,
  message: string,
  headers?: Readonly<Record<string, string>>,
): void {
  if (res.headersSent) {
    // Mid-stream there is no way to report an error in-band; cutting the connection makes the
    // caller see a truncated response instead of a falsely complete one.
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { message, type } });
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
