// Personal gateway keys (issue 29 item 1), pure: the key's shape and hash, whether a stored key may
// call now, the tool a caller's User-Agent names, and the key's own limits. A key is `svcgk_` + 256
// random bits (base64url, 43 characters); the prefix lets the model proxy tell it from a session's
// signed proxy token without any work, and lets secret scanners recognise a leaked one. Only its
// SHA-256 is stored and the lookup is by that hash, so nothing is compared in variable time.
import { createHash, randomBytes } from 'node:crypto';
import { tenantRefusal } from './tenants.ts';

export const GATEWAY_KEY_PREFIX = 'svcgk_';
const KEY_LENGTH = GATEWAY_KEY_PREFIX.length + 43;
/** Characters of the key shown in lists (the prefix and 6 random characters). */
const DISPLAY_LENGTH = 12;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export const newGatewayKey = (): string => GATEWAY_KEY_PREFIX + randomBytes(32).toString('base64url');

/** Cheap shape check (prefix and length), so the proxy branches before any hashing. */
export const isGatewayKey = (raw: string): boolean =>
  raw.length === KEY_LENGTH && raw.startsWith(GATEWAY_KEY_PREFIX) && BASE64URL.test(raw.slice(6));

export const hashGatewayKey = (raw: string): string => createHash('sha256').update(raw, 'utf8').digest('hex');

export const gatewayKeyPrefix = (raw: string): string => raw.slice(0, DISPLAY_LENGTH);

export type GatewayKeyRefusal = 'unknown' | 'revoked' | 'expired' | 'user_inactive' | 'tenant_inactive';

/** Why a stored key may not call now, or null when it may. */
export function gatewayKeyRefusal(
  key: { revokedAt: Date | null; expiresAt: Date | null },
  owner: { isActive: boolean | null; deletedAt: Date | null },
  tenant: { status: string; deletedAt: Date | null; name: string } | null,
  now: Date,
): GatewayKeyRefusal | null {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (owner.isActive !== true || owner.deletedAt) return 'user_inactive';
  if (tenantRefusal(tenant) !== null) return 'tenant_inactive';
  return null;
}

/** A call's tool_name from its User-Agent: the four CLIs by name, anything else `gateway`. */
export function gatewayToolName(userAgent: string | undefined): string {
  const ua = (userAgent ?? '').toLowerCase();
  if (ua.includes('claude-cli') || ua.includes('claude-code')) return 'claude-code';
  if (ua.includes('qwen')) return 'qwen-code';
  if (ua.includes('gemini-cli') || ua.includes('geminicli')) return 'gemini-cli';
  if (ua.includes('codex')) return 'codex';
  return 'gateway';
}

/** The key's own limits (null: none). */
export interface GatewayKeyLimits {
  dailyTokenLimit: number | null;
  monthlyTokenLimit: number | null;
  dailyRequestLimit: number | null;
}

export const hasKeyLimits = (l: GatewayKeyLimits): boolean =>
  l.dailyTokenLimit !== null || l.monthlyTokenLimit !== null || l.dailyRequestLimit !== null;

/** What the key used this day and month (requests: counted and in flight). */
export interface GatewayKeyUse {
  dayRequests: number;
  dayTokens: number;
  monthTokens: number;
}

/**
 * The first of the key's limits with no room for one more request, as the refusal's message, or null.
 * Requests are exact (taken before the call); tokens are known at the end, so a token limit is passed
 * by at most the calls in flight (as for the user's and tenant's quotas).
 */
export function keyLimitExceeded(limits: GatewayKeyLimits, use: GatewayKeyUse): string | null {
  const over = (name: string, used: number, limit: number) =>
    `This gateway key's ${name} limit is reached (${used} of ${limit} used)`;
  if (limits.dailyRequestLimit !== null && use.dayRequests >= limits.dailyRequestLimit)
    return over('daily request', use.dayRequests, limits.dailyRequestLimit);
  if (limits.dailyTokenLimit !== null && use.dayTokens >= limits.dailyTokenLimit)
    return over('daily token', use.dayTokens, limits.dailyTokenLimit);
  if (limits.monthlyTokenLimit !== null && use.monthTokens >= limits.monthlyTokenLimit)
    return over('monthly token', use.monthTokens, limits.monthlyTokenLimit);
  return null;
}
