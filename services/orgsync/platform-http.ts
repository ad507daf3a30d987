// What both org-directory adapters share: one JSON call with a timeout, HTTP failures mapped to
// PlatformApiError kinds (429 rate-limited with the platform's hint, 5xx and network errors
// unavailable, 401/403 auth), the app secret scrubbed from every message a platform sends back, and
// the access-token cache (per platform, base URL, app key and secret digest; renewed
// TOKEN_EXPIRY_MARGIN_MS before the platform's expiry; dropped when the platform calls it invalid).
import { createHash } from 'node:crypto';
import {
  type Platform,
  PlatformApiError,
  type PlatformCredentials,
  TOKEN_EXPIRY_MARGIN_MS,
} from '../../domain/orgsync/platform.ts';

export const PLATFORM_CALL_TIMEOUT_MS = 15_000;
/** Platform-supplied text kept in an error message (the rest is cut). */
const MAX_MESSAGE = 200;

export interface JsonAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A platform message made safe to keep: the secret and key removed, length bounded. */
export function scrub(text: unknown, creds: Pick<PlatformCredentials, 'appSecret' | 'appKey'>): string {
  let s = typeof text === 'string' ? text : '';
  if (creds.appSecret) s = s.split(creds.appSecret).join('[redacted]');
  if (creds.appKey) s = s.split(creds.appKey).join('[app key]');
  return s.slice(0, MAX_MESSAGE);
}

/** Seconds (or an HTTP date) from a hint header, as milliseconds; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value == null || value.trim() === '') return null;
  const v = value.trim();
  if (/^[0-9]{1,7}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export async function callJson(
  platform: Platform,
  url: URL,
  init: { method: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> },
  rateLimitHintHeader: string,
): Promise<JsonAnswer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method,
      headers: {
        accept: 'application/json',
        ...(init.body !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        ...init.headers,
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal: AbortSignal.timeout(PLATFORM_CALL_TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (err) {
    const reason = (err as Error).name === 'TimeoutError' ? 'timed out' : 'network error';
    throw new PlatformApiError(platform, 'unavailable', `${platform} ${url.pathname}: ${reason}`);
  }
  const text = await res.text().catch(() => '');
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = text ? JSON.parse(text) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: judged by the status below
  }
  const where = `${platform} ${url.pathname}`;
  if (res.status === 429)
    throw new PlatformApiError(
      platform,
      'rate_limited',
      `${where}: rate limited (HTTP 429)`,
      429,
      retryAfterMs(res.headers.get(rateLimitHintHeader) ?? res.headers.get('retry-after')),
    );
  if (res.status >= 500)
    throw new PlatformApiError(platform, 'unavailable', `${where}: HTTP ${res.status}`, res.status);
  if (res.status === 401 || res.status === 403)
    throw new PlatformApiError(platform, 'auth', `${where}: HTTP ${res.status}`, res.status);
  if (res.status >= 400 && Object.keys(body).length === 0)
    throw new PlatformApiError(platform, 'rejected', `${where}: HTTP ${res.status}`, res.status);
  return { status: res.status, headers: res.headers, body };
}

interface CachedToken {
  token: string;
  renewAt: number;
}

/** Process-wide token cache; never holds the secret itself (keyed by its SHA-256). */
const tokens = new Map<string, CachedToken>();

const cacheKey = (platform: Platform, creds: PlatformCredentials) =>
  `${platform}\u0000${creds.baseUrl}\u0000${creds.appKey}\u0000${createHash('sha256').update(creds.appSecret).digest('hex')}`;

export const tokenCache = {
  get(platform: Platform, creds: PlatformCredentials, now = Date.now()): string | undefined {
    const c = tokens.get(cacheKey(platform, creds));
    return c && c.renewAt > now ? c.token : undefined;
  },
  put(
    platform: Platform,
    creds: PlatformCredentials,
    token: string,
    expiresInSeconds: number,
    now = Date.now(),
  ) {
    const life = Math.max(0, expiresInSeconds * 1000);
    // A short-lived token is still used once; never cached past its expiry.
    const renewAt = now + Math.max(Math.min(life, 1000), life - TOKEN_EXPIRY_MARGIN_MS);
    tokens.set(cacheKey(platform, creds), { token, renewAt });
  },
  drop(platform: Platform, creds: PlatformCredentials) {
    tokens.delete(cacheKey(platform, creds));
  },
  /** Tests: forget every token. */
  clear() {
    tokens.clear();
  },
};

/** Reads a string field; numbers become strings (platform ids come as either). */
export function idOf(v: unknown): string | null {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

export const textOf = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : null;

/**
 * Runs `call` with a token; when the platform says the token is invalid or expired, drops it and
 * tries once more with a fresh one.
 */
export async function withToken<T>(
  platform: Platform,
  creds: PlatformCredentials,
  fetchToken: () => Promise<{ token: string; expiresIn: number }>,
  call: (token: string) => Promise<T>,
  isStaleToken: (err: unknown) => boolean,
): Promise<T> {
  const token = async () => {
    const cached = tokenCache.get(platform, creds);
    if (cached) return cached;
    const fresh = await fetchToken();
    tokenCache.put(platform, creds, fresh.token, fresh.expiresIn);
    return fresh.token;
  };
  try {
    return await call(await token());
  } catch (err) {
    if (!isStaleToken(err)) throw err;
    tokenCache.drop(platform, creds);
    return call(await token());
  }
}
