// The per-instance cache of authenticated sessions: one cache (named 'auth-sessions') of the generic
// invalidated cache (db/invalidated-cache.ts: LRU + TTL, a generation against racing reads, dropped on
// every instance by LISTEN/NOTIFY on PostgreSQL and in-process on SQLite; its header holds the rules
// and the bounds).
//
// api/middleware/auth.ts resolves a session token to (session, user, role, tenant, status, expiry) with
// one indexed query; on PostgreSQL that round trip is most of the cost of an authenticated request, so
// each API instance keeps the positive results: token hash -> the resolved context. Only usable
// sessions are cached; a refusal is always read again.
//
// Every write that ends a session or changes a fact a session is authorised by (logout, password
// change, user deactivation / deletion / role / tenant / must_change_password, extra permissions,
// tenant status / deletion) calls `invalidateAuthSessions(database, scope)` after its write has
// committed. It invalidates by user, tenant or login session in EVERY cache of the handle, so the
// same writes also drop the model proxy's cached call contexts of that user or tenant
// (services/proxy/call-context-cache.ts). Bound when a notification is lost: the TTL,
// SVC_AUTH_SESSION_CACHE_TTL_MS (30 s by default); SVC_AUTH_SESSION_CACHE_SIZE=0 turns the cache off.
import type { DatabaseHandle } from './client.ts';
import {
  existingInvalidatedCache,
  InvalidatedCache,
  type InvalidatedCacheStats,
  invalidateCaches,
  invalidatedCache,
  sqliteCachesFresh,
} from './invalidated-cache.ts';

const NAME = 'auth-sessions';

/** What a write changed: one login session, everything of one user or of one tenant's users, or all. */
export type AuthInvalidation = { sessionId: number } | { userId: number } | { tenantId: number } | 'all';

export { InvalidatedCache as AuthSessionCache };
export type AuthSessionCacheStats = InvalidatedCacheStats;

/** This handle's session cache, created on first use with `opts` (later calls get the same cache). */
export function authSessionCache<T>(
  database: DatabaseHandle,
  opts: { max: number; ttlMs: number },
): InvalidatedCache<T> {
  return invalidatedCache<T>(database, NAME, opts);
}

/** Clears the handle's caches when another process committed to the SQLite file (call before a lookup). */
export const sqliteCacheFresh = sqliteCachesFresh;

/** The session cache of this handle if one was created (tests and metrics). */
export function existingAuthSessionCache(database: DatabaseHandle): InvalidatedCache<unknown> | undefined {
  return existingInvalidatedCache(database, NAME);
}

/**
 * THE invalidation for identity writes: call after a committed write that ends a session or changes
 * what a session is authorised by. Drops the matching entries of every cache (sessions and proxy call
 * contexts) in this process at once and on every other instance by NOTIFY (an error here propagates:
 * the write stands, other instances fall back on the TTL).
 */
export function invalidateAuthSessions(database: DatabaseHandle, scope: AuthInvalidation): Promise<void> {
  return invalidateCaches(
    database,
    scope !== 'all' && 'sessionId' in scope ? { authSessionId: scope.sessionId } : scope,
  );
}
