// The model proxy's side of personal gateway keys (issue 29 item 1): a caller that sent a gateway key
// (domain/gateway-keys.ts isGatewayKey: `svcgk_` + 43 characters) instead of a session's proxy token is
// resolved here, and from then on api/routes/remote/llm-proxy.ts handles its call like a session
// token's: the same endpoint allow-list, quota reserve and settle (the key's owner and tenant), content
// filter, egress guard and refusal types. What differs is said here:
//   - the key is looked up by its SHA-256 (services/gateway-keys.ts: cached per instance, revocation
//     pushed to every instance); unknown, revoked or expired -> 401 proxy_auth_error, a disabled owner
//     or an inactive tenant -> 403 proxy_auth_error;
//   - there is no remote session: the call's tool is the caller's CLI (from its User-Agent), its host
//     `gateway:<key name>`, its message row's source `gateway`; nothing is recorded on a session;
//   - the key's own limits (gateway_key_usage) are taken after the owner's quota, and refused as
//     429 quota_exceeded naming the key's limit.
// The key itself is never logged, audited or cached (the cache key is its hash).

import type { GatewayCallContext } from '../../db/repositories/gateway-keys.ts';
import type { ProxyCallContext } from '../../db/repositories/proxy-tokens.ts';
import type { ProxyTokenClaims } from '../../domain/crypto/proxy-token.ts';
import { type GatewayKeyRefusal, gatewayToolName } from '../../domain/gateway-keys.ts';
import { type GatewayKeyService, gatewayKeyFact, gatewayKeysFor } from '../../services/gateway-keys.ts';

const MESSAGES: Record<GatewayKeyRefusal | 'malformed', string> = {
  malformed: 'Invalid gateway key',
  unknown: 'Invalid gateway key',
  revoked: 'Gateway key revoked',
  expired: 'Gateway key expired',
  user_inactive: 'The user of this gateway key is disabled',
  tenant_inactive: 'The tenant of this gateway key is not active',
};

/** A resolved caller: the claims and call context the proxy's shared path reads, and the key. */
export interface GatewayCaller {
  claims: ProxyTokenClaims;
  call: ProxyCallContext;
  key: GatewayCallContext;
}

export type GatewayResolution =
  | { ok: true; caller: GatewayCaller }
  | {
      ok: false;
      status: 401 | 403;
      reason: string;
      message: string;
      who?: { sid: string; uid: number; tid: number | null; prv: string };
    };

/** The claims a key's call is audited and logged under (`sid` names the key, never holds it). */
function claimsOf(key: GatewayCallContext): ProxyTokenClaims {
  const fact = gatewayKeyFact(key.id);
  const exp = key.expiresAt ? Math.floor(key.expiresAt.getTime() / 1000) : Number.MAX_SAFE_INTEGER;
  return {
    jti: fact,
    sid: fact,
    uid: key.userId,
    tid: key.tenantId,
    prv: key.provider,
    iat: 0,
    exp,
    typ: 'gateway',
  };
}

export function gatewayCallers(deps: Parameters<typeof gatewayKeysFor>[0]) {
  const keys: GatewayKeyService = gatewayKeysFor(deps);
  return {
    keys,
    /** Resolves a gateway key (throws when the database cannot be read: the caller answers 503). */
    async resolve(raw: string, userAgent: string | undefined): Promise<GatewayResolution> {
      const r = await keys.context(raw);
      if (!r.ok) {
        const forbidden = r.reason === 'user_inactive' || r.reason === 'tenant_inactive';
        const claims = r.ctx ? claimsOf(r.ctx) : undefined;
        return {
          ok: false,
          status: forbidden ? 403 : 401,
          reason: r.reason,
          message: MESSAGES[r.reason],
          who: claims,
        };
      }
      const key = r.ctx;
      const claims = claimsOf(key);
      const call: ProxyCallContext = {
        sessionId: claims.sid,
        userId: key.userId,
        tenantId: key.tenantId,
        provider: key.provider,
        expiresAt: key.expiresAt ?? new Date(8_640_000_000_000_000),
        revokedAt: null,
        sessionStatus: 'active',
        toolName: gatewayToolName(userAgent),
        hostName: `gateway:${key.name}`,
        userActive: true,
        userDeleted: false,
        username: key.username,
        tenantName: key.tenant?.name ?? null,
        tenantStatus: key.tenant?.status ?? null,
        tenantDeletedAt: key.tenant?.deletedAt ?? null,
        key: key.storedKey,
      };
      return { ok: true, caller: { claims, call, key } };
    },
  };
}
