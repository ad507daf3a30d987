// The model proxy's per-instance cache of call contexts (db/repositories/proxy-tokens.ts: the token's
// issuance record, session state, user and tenant standing and the stored key's ciphertext, read in
// one five-table query): one cache (named 'proxy-call-contexts') of the generic invalidated cache
// (db/invalidated-cache.ts: LRU + TTL, a generation against racing reads, dropped on every instance
// by LISTEN/NOTIFY on PostgreSQL and in-process on SQLite; its header holds the rules and bounds).
// On PostgreSQL the context read is a round trip per call; on SQLite ~25 us of CPU. Each process keeps
// the context of a token once a call made with it passed every check AND was answered by the
// provider (api/routes/remote/llm-proxy.ts): jti -> context. A refusal, or a key the call could not
// use (egress refused, undecryptable), is never cached.
//
// What drops an entry before its TTL (after the write has committed), on every instance:
//   - token revocation and rotation and a session's end (services/proxy-tokens.ts revokeForSession and
//     rotate: every path that ends a session revokes its tokens there), scope { sessionId };
//   - every identity write the session cache is told of (db/auth-session-cache.ts
//     invalidateAuthSessions: a user deactivated, deleted or given another role or tenant, a tenant
//     suspended or deleted, ...), by user or tenant: the two caches share one invalidation;
//   - every write of a tenant's stored keys (created, changed, deactivated, deleted: the repositories
//     db/repositories/api-key-store.ts and tenant-api-keys.ts call keysChanged), scope { tenantId };
//   - any other writer may call invalidateProxyContexts with { userId }, { tenantId } or 'all'.
// Changes that are NOT pushed (a session's state changed without revoking its tokens, raw SQL by an
// operator) are seen when the entry's TTL ends:
// SVC_PROXY_CONTEXT_CACHE_TTL_MS, 1 s by default. That is the bound. SVC_PROXY_CONTEXT_CACHE_SIZE=0
// turns the cache off. Expiry is checked by the caller on every hit, never cached as "valid". Keys are
// jtis (a token's id, not the token); the ciphertext of the stored key is held, never its plaintext.
import type { DatabaseHandle } from '../../db/client.ts';
import {
  type CachedFacts,
  type InvalidatedCache,
  invalidateCaches,
  invalidatedCache,
} from '../../db/invalidated-cache.ts';
import type { ProxyCallContext } from '../../db/repositories/proxy-tokens.ts';

const NAME = 'proxy-call-contexts';

/** What a write changed: one remote session's tokens, everything of one user or one tenant, or all. */
export type ProxyContextInvalidation =
  | { sessionId: string }
  | { userId: number }
  | { tenantId: number }
  | 'all';

export type ProxyContextCache = InvalidatedCache<ProxyCallContext>;

/** The facts a context is dropped by. */
export const contextFacts = (c: ProxyCallContext): CachedFacts => ({
  userId: c.userId,
  tenantId: c.tenantId,
  remoteSessionId: c.sessionId,
});

/** This handle's cache, created on first use (later calls get the same one); starts the LISTEN on PostgreSQL. */
export function proxyContextCache(
  database: DatabaseHandle,
  opts: { max: number; ttlMs: number },
): ProxyContextCache {
  return invalidatedCache<ProxyCallContext>(database, NAME, opts);
}

/**
 * Call after a committed write that revokes a token or changes what a token is authorised by. Drops
 * the matching entries (of every cache of the handle) here at once and, on PostgreSQL, NOTIFYs every
 * other instance (an error propagates: the write stands, other instances fall back on the TTL).
 */
export function invalidateProxyContexts(
  database: DatabaseHandle,
  scope: ProxyContextInvalidation,
): Promise<void> {
  return invalidateCaches(
    database,
    scope !== 'all' && 'sessionId' in scope ? { remoteSessionId: scope.sessionId } : scope,
  );
}
