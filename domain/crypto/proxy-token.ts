/**
 * Proxy tokens: what a remote agent holds instead of a provider key. A token is
 *
 *   svcpt_<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "svcpt_<base64url(JSON claims)>"))>
 *
 * The prefix makes a leaked token recognisable (secret scanners, logs) and is covered by the signature.
 * This module only signs and checks the signature and expiry; whether the `jti` is still issued and the
 * session still live is the caller's database check (revocation), done after this one succeeds.
 *
 * Pure: no I/O, no clock (`now` is passed in, in seconds since the epoch).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const PROXY_TOKEN_PREFIX = 'svcpt_';

/** Longest token accepted; real ones are ~300 characters, so anything far longer is junk. */
const MAX_TOKEN_LENGTH = 4096;
const SIGNATURE_LENGTH = 32;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface ProxyTokenClaims {
  /** Token id: the key of the server-side issuance record, used for revocation. */
  jti: string;
  /** Session id the token is bound to. */
  sid: string;
  /** User id. */
  uid: number;
  /** Tenant id; null for a user without a tenant. */
  tid: number | null;
  /** Provider whose stored key the token may use. */
  prv: string;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expires at, seconds since the epoch (exclusive: the token is expired when now >= exp). */
  exp: number;
  /** Session type; selects the TTL (see proxyTokenTtlSeconds). */
  typ: string;
}

export type ProxyTokenFailure = 'malformed' | 'bad_signature' | 'expired';

export type ProxyTokenVerification =
  | { ok: true; claims: ProxyTokenClaims }
  | { ok: false; reason: ProxyTokenFailure };

export function signProxyToken(claims: ProxyTokenClaims, secret: string): string {
  assertSecret(secret);
  if (!isClaims(claims)) throw new Error('Invalid proxy token claims');
  // Only the known claims, in a fixed order, so the token never carries stray fields.
  const { jti, sid, uid, tid, prv, iat, exp, typ } = claims;
  const payload = Buffer.from(JSON.stringify({ jti, sid, uid, tid, prv, iat, exp, typ })).toString(
    'base64url',
  );
  const signed = PROXY_TOKEN_PREFIX + payload;
  return `${signed}.${sign(signed, secret).toString('base64url')}`;
}

/**
 * Checks structure, signature (constant time, before the payload is parsed) and expiry.
 * `now` is in seconds since the epoch.
 */
export function verifyProxyTokenSignature(
  token: string,
  secret: string,
  now: number,
): ProxyTokenVerification {
  assertSecret(secret);
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !token.startsWith(PROXY_TOKEN_PREFIX)) {
    return fail('malformed');
  }
  const dot = token.indexOf('.');
  if (dot === -1 || dot !== token.lastIndexOf('.')) return fail('malformed');
  const payload = token.slice(PROXY_TOKEN_PREFIX.length, dot);
  const signature = token.slice(dot + 1);
  if (!BASE64URL.test(payload) || !BASE64URL.test(signature)) return fail('malformed');

  const given = Buffer.from(signature, 'base64url');
  // The re-encoding check rejects non-canonical spellings of the same signature bytes.
  if (given.length !== SIGNATURE_LENGTH || given.toString('base64url') !== signature)
    return fail('bad_signature');
  if (!timingSafeEqual(given, sign(token.slice(0, dot), secret))) return fail('bad_signature');

  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return fail('malformed');
  }
  if (!isClaims(claims)) return fail('malformed');
  if (now >= claims.exp) return fail('expired');
  return { ok: true, claims };
}

/** Default proxy-token lifetimes by session type (spec: 4 h general, 15 min HA pool). */
export const DEFAULT_PROXY_TOKEN_TTL_SECONDS: Readonly<Record<string, number>> = Object.freeze({
  general: 4 * 60 * 60,
  ha_pool: 15 * 60,
});

/**
 * Lifetime for a session type. Lookup order: an override for the type, the default for the type, an
 * override for `general`, the general default. Overrides come from configuration; a bad value is a
 * configuration error and throws rather than issuing tokens with a surprising lifetime.
 */
export function proxyTokenTtlSeconds(
  sessionType: string,
  overrides?: Readonly<Record<string, number>>,
): number {
  const ttl =
    overrides?.[sessionType] ??
    DEFAULT_PROXY_TOKEN_TTL_SECONDS[sessionType] ??
    overrides?.general ??
    DEFAULT_PROXY_TOKEN_TTL_SECONDS.general;
  if (!Number.isSafeInteger(ttl) || ttl <= 0) {
    throw new RangeError(`Proxy token TTL for session type "${sessionType}" must be a positive integer`);
  }
  return ttl;
}

function sign(data: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

function fail(reason: ProxyTokenFailure): ProxyTokenVerification {
  return { ok: false, reason };
}

function assertSecret(secret: string): void {
  if (typeof secret !== 'string' || secret.length === 0)
    throw new Error('Proxy token secret must not be empty');
}

function isClaims(value: unknown): value is ProxyTokenClaims {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    isNonEmptyString(c.jti) &&
    isNonEmptyString(c.sid) &&
    Number.isSafeInteger(c.uid) &&
    (c.tid === null || Number.isSafeInteger(c.tid)) &&
    isNonEmptyString(c.prv) &&
    Number.isSafeInteger(c.iat) &&
    Number.isSafeInteger(c.exp) &&
    (c.exp as number) > (c.iat as number) &&
    isNonEmptyString(c.typ)
  );
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
