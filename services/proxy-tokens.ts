// Issues, rotates, revokes and verifies proxy tokens. The token is signed (domain/crypto/proxy-token.ts)
// and its jti recorded, so it can be revoked; verification checks signature, record, expiry and the
// session's lifecycle state. Callers pass the token on to the agent and never log or persist it.
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../db/client.ts';
import { type ProxyCallContext, proxyTokensRepository } from '../db/repositories/proxy-tokens.ts';
import {
  type ProxyTokenClaims,
  type ProxyTokenVerification,
  proxyTokenTtlSeconds,
  signProxyToken,
  verifyProxyTokenSignature,
} from '../domain/crypto/proxy-token.ts';
import { tenantRefusal } from '../domain/tenants.ts';
import { contextFacts, invalidateProxyContexts, proxyContextCache } from './proxy/call-context-cache.ts';
import { type KeySettings, proxyTokenSecret } from './secrets.ts';

export type ProxyTokenRefusal =
  | 'malformed'
  | 'bad_signature'
  | 'expired'
  | 'unknown'
  | 'revoked'
  | 'session_inactive'
  | 'user_inactive'
  | 'tenant_inactive';

export interface IssueRequest {
  sessionId: string;
  userId: number;
  tenantId: number | null;
  provider: string;
  /** `general` (4 h) or `ha_pool` (15 min) by default, or as settings.remote says (ttlOverrides). */
  sessionType?: string;
}

/** Token lifetimes in seconds per session type, from the `remote` settings section (minutes). */
export function proxyTokenTtlOverrides(remote: {
  proxy_token_ttl_general_minutes: number;
  proxy_token_ttl_ha_pool_minutes: number;
}): Record<string, number> {
  return {
    general: remote.proxy_token_ttl_general_minutes * 60,
    ha_pool: remote.proxy_token_ttl_ha_pool_minutes * 60,
  };
}

/** Session states in which a proxy token may be used (a paused session's CLI is frozen anyway). */
const LIVE_SESSION_STATES = new Set(['active', 'paused']);

/** Tokens whose signature checked out, so a busy session's calls skip the HMAC (about 15 us each). */
const SIGNATURE_CACHE_SIZE = 10_000;

/**
 * The server-side half of verification, given the signed claims and the one-query context: issuance
 * record, revocation, expiry, session lifecycle state, and the user's and tenant's standing.
 */
export function proxyCallRefusal(
  claims: ProxyTokenClaims,
  ctx: ProxyCallContext | undefined,
  now: Date,
): ProxyTokenRefusal | null {
  if (!ctx || ctx.sessionId !== claims.sid || ctx.userId !== claims.uid || ctx.provider !== claims.prv)
    return 'unknown';
  if (ctx.revokedAt) return 'revoked';
  if (ctx.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (ctx.sessionStatus === null || !LIVE_SESSION_STATES.has(ctx.sessionStatus)) return 'session_inactive';
  if (ctx.userActive !== true || ctx.userDeleted) return 'user_inactive';
  const tenant =
    ctx.tenantStatus === null
      ? null
      : { status: ctx.tenantStatus, deletedAt: ctx.tenantDeletedAt, name: ctx.tenantName ?? '' };
  if (tenantRefusal(tenant) !== null) return 'tenant_inactive';
  return null;
}

export function proxyTokenService(deps: {
  database: DatabaseHandle;
  settings: KeySettings;
  now: () => Date;
  ttlOverrides?: Record<string, number>;
  /** The per-instance call-context cache (services/proxy/call-context-cache.ts); absent = always read. */
  contextCache?: { max: number; ttlMs: number };
}) {
  const repo = proxyTokensRepository(deps.database);
  const contexts = deps.contextCache ? proxyContextCache(deps.database, deps.contextCache) : undefined;
  const secret = proxyTokenSecret(deps.settings);
  const verifiedSignatures = new Map<string, ProxyTokenClaims>();

  /** Structure, signature and expiry (no database); good signatures are remembered. */
  function verifySignature(token: string): ProxyTokenVerification {
    const nowSeconds = Math.floor(deps.now().getTime() / 1000);
    const known = verifiedSignatures.get(token);
    if (known !== undefined) {
      if (nowSeconds < known.exp) return { ok: true, claims: known };
      verifiedSignatures.delete(token);
    }
    const sig = verifyProxyTokenSignature(token, secret, nowSeconds);
    if (sig.ok) {
      if (verifiedSignatures.size >= SIGNATURE_CACHE_SIZE) verifiedSignatures.clear();
      verifiedSignatures.set(token, sig.claims);
    }
    return sig;
  }

  /**
   * Revokes every live token of a session, then drops their cached call contexts on every instance
   * (pushed: refused everywhere within milliseconds). A failed NOTIFY leaves the TTL as the bound.
   */
  async function revokeForSession(
    sessionId: string,
    reason: 'stopped' | 'completed' | 'rotated' | 'aborted',
  ): Promise<number> {
    const n = await repo.revokeForSession(sessionId, reason, deps.now());
    await invalidateProxyContexts(deps.database, { sessionId }).catch(() => undefined);
    return n;
  }

  async function issue(req: IssueRequest): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const type = req.sessionType ?? 'general';
    const now = deps.now();
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + proxyTokenTtlSeconds(type, deps.ttlOverrides);
    const jti = randomUUID();
    await repo.record({
      jti,
      sessionId: req.sessionId,
      userId: req.userId,
      tenantId: req.tenantId,
      provider: req.provider,
      sessionType: type,
      issuedAt: now,
      expiresAt: new Date(exp * 1000),
    });
    const token = signProxyToken(
      { jti, sid: req.sessionId, uid: req.userId, tid: req.tenantId, prv: req.provider, iat, exp, typ: type },
      secret,
    );
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  return {
    issue,
    /** Revokes the session's live tokens (reason `rotated`) and issues a fresh one. */
    async rotate(req: IssueRequest) {
      await revokeForSession(req.sessionId, 'rotated');
      return issue(req);
    },
    revokeForSession,
    verifySignature,
    /** The proxy's one read per call; judge it with proxyCallRefusal. */
    callContext: (jti: string) => repo.callContext(jti),
    /**
     * The same, served from the per-instance cache when a call with this token succeeded recently.
     * `generation` goes to rememberCallContext (undefined: nothing to remember, it came from the cache
     * or there is no cache). Expiry is judged by the caller on every call.
     */
    async cachedCallContext(
      claims: ProxyTokenClaims,
    ): Promise<{ ctx: ProxyCallContext | undefined; generation: number | undefined }> {
      if (contexts === undefined) return { ctx: await repo.callContext(claims.jti), generation: undefined };
      const hit = contexts.get(claims.jti);
      if (hit !== undefined) return { ctx: hit, generation: undefined };
      const generation = contexts.generation;
      return { ctx: await repo.callContext(claims.jti), generation };
    },
    /**
     * Caches a context read at `generation` once a call made with it was answered by the provider
     * (a refusal, or a key the call could not use, is never cached); skipped if anything was
     * invalidated since the read.
     */
    rememberCallContext(claims: ProxyTokenClaims, ctx: ProxyCallContext, generation: number): void {
      if (contexts !== undefined && proxyCallRefusal(claims, ctx, deps.now()) === null)
        contexts.set(claims.jti, ctx, contextFacts(ctx), generation);
    },
    /** Resolves once the call-context cache is in use (PostgreSQL: after its LISTEN connected). */
    contextCacheReady: (): Promise<void> => contexts?.ready() ?? Promise.resolve(),
    /** Full verification: signature, then issuance record, expiry and session state in one query. */
    async verify(
      token: string,
    ): Promise<
      | { ok: true; claims: ProxyTokenClaims; context: ProxyCallContext }
      | { ok: false; reason: ProxyTokenRefusal }
    > {
      const sig = verifySignature(token);
      if (!sig.ok) return sig;
      const context = await repo.callContext(sig.claims.jti);
      const refusal = proxyCallRefusal(sig.claims, context, deps.now());
      if (refusal !== null) return { ok: false, reason: refusal };
      return { ok: true, claims: sig.claims, context: context! };
    },
  };
}

export type ProxyTokenService = ReturnType<typeof proxyTokenService>;
