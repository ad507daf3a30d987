// Personal gateway keys (issue 29 item 1): verification for the model proxy (and the OTLP ingest), with
// a per-instance cache of verified keys, and the key's own limits.
//
// Cache: one cache ('gateway-key-contexts') of the invalidated cache (db/invalidated-cache.ts), keyed
// by the key's SHA-256 (never the key), holding the one-query context (the key, its owner's and
// tenant's standing, the stored provider key's ciphertext). Entries leave early, on every instance,
// by the same push as the proxy's call contexts (LISTEN/NOTIFY on PostgreSQL): a key's revocation
// invalidates the fact `gateway-key:<id>` (carried as the entry's remote-session fact: a key is the
// laptop's counterpart of a session's token), a user's or tenant's change and a stored-key write by
// user or tenant (the existing invalidations). Anything else is seen within the TTL
// (SVC_PROXY_CONTEXT_CACHE_TTL_MS, 1 s by default). Revocation and expiry are checked on every hit.
//
// Limits: a key with limits takes one request of its day in gateway_key_usage before the call (one
// conditional UPDATE) and adds the call's tokens when it ends; a key without limits writes nothing.
// last_used_at is written at most once a minute per key and instance.
import type { DatabaseHandle } from '../db/client.ts';
import { invalidateCaches, invalidatedCache } from '../db/invalidated-cache.ts';
import { type GatewayCallContext, gatewayKeysRepository } from '../db/repositories/gateway-keys.ts';
import {
  type GatewayKeyRefusal,
  gatewayKeyRefusal,
  hashGatewayKey,
  hasKeyLimits,
  isGatewayKey,
  keyLimitExceeded,
} from '../domain/gateway-keys.ts';

const CACHE_NAME = 'gateway-key-contexts';
const TOUCH_EVERY_MS = 60_000;

/** The fact a key's cache entries are dropped by (see the header). */
export const gatewayKeyFact = (keyId: number): string => `gateway-key:${keyId}`;

export interface VerifiedGatewayKey {
  id: number;
  userId: number;
  tenantId: number | null;
  username: string;
  provider: string;
  name: string;
}

export type GatewayKeyVerification =
  | { ok: true; key: VerifiedGatewayKey }
  | { ok: false; reason: GatewayKeyRefusal | 'malformed' };

export type GatewayContextResult =
  | { ok: true; ctx: GatewayCallContext }
  | { ok: false; reason: GatewayKeyRefusal | 'malformed'; ctx?: GatewayCallContext };

interface Deps {
  database: DatabaseHandle;
  now: () => Date;
  settings: { SVC_PROXY_CONTEXT_CACHE_SIZE: number; SVC_PROXY_CONTEXT_CACHE_TTL_MS: number };
}

function gatewayKeyService(deps: Deps) {
  const repo = gatewayKeysRepository(deps.database);
  const cache = invalidatedCache<GatewayCallContext>(deps.database, CACHE_NAME, {
    max: deps.settings.SVC_PROXY_CONTEXT_CACHE_SIZE,
    ttlMs: deps.settings.SVC_PROXY_CONTEXT_CACHE_TTL_MS,
  });
  const touched = new Map<number, number>();

  /** The key's context (cached), and whether it may call now. Throws when the database cannot be read. */
  async function context(raw: string): Promise<GatewayContextResult> {
    if (!isGatewayKey(raw)) return { ok: false, reason: 'malformed' };
    const hash = hashGatewayKey(raw);
    let ctx = cache.get(hash);
    if (ctx === undefined) {
      const generation = cache.generation;
      ctx = await repo.callContext(hash);
      if (ctx === undefined) return { ok: false, reason: 'unknown' };
      cache.set(
        hash,
        ctx,
        { userId: ctx.userId, tenantId: ctx.tenantId, remoteSessionId: gatewayKeyFact(ctx.id) },
        generation,
      );
    }
    const owner = { isActive: ctx.userActive, deletedAt: ctx.userDeletedAt };
    const reason = gatewayKeyRefusal(ctx, owner, ctx.tenant, deps.now());
    return reason === null ? { ok: true, ctx } : { ok: false, reason, ctx };
  }

  return {
    context,

    /** The contract of issue 29: hash, revocation, expiry, user and tenant standing. */
    async verifyGatewayKey(raw: string): Promise<GatewayKeyVerification> {
      const r = await context(raw);
      if (!r.ok) return { ok: false, reason: r.reason };
      const { id, userId, tenantId, username, provider, name } = r.ctx;
      return { ok: true, key: { id, userId, tenantId, username, provider, name } };
    },

    /**
     * Takes one request from the key's own limits (nothing for a key without limits). Returns the
     * refusal's message when a limit has no room, else the settle to call when the call ends.
     */
    async reserveKeyLimits(
      ctx: GatewayCallContext,
      periods: { day: string; month: string },
    ): Promise<{ refused: string } | { settle: (tokens: number, counted: boolean) => Promise<void> }> {
      if (!hasKeyLimits(ctx)) return { settle: async () => {} };
      const used = await repo.reserveRequest(ctx.id, periods, ctx);
      if (used !== null)
        return { refused: keyLimitExceeded(ctx, used) ?? "This gateway key's limit is reached" };
      return { settle: (tokens, counted) => repo.settleRequest(ctx.id, periods, tokens, counted) };
    },

    /** last_used_at, at most once a minute per key (fire and forget). */
    touch(ctx: GatewayCallContext): void {
      const now = deps.now().getTime();
      const last = touched.get(ctx.id) ?? ctx.lastUsedAt?.getTime() ?? 0;
      if (now - last < TOUCH_EVERY_MS) return;
      if (touched.size > 10_000) touched.clear();
      touched.set(ctx.id, now);
      void repo.touch(ctx.id, new Date(now)).catch(() => touched.delete(ctx.id));
    },

    /** Resolves once the cache is in use (PostgreSQL: after its LISTEN connected). */
    ready: (): Promise<void> => cache.ready(),
  };
}

export type GatewayKeyService = ReturnType<typeof gatewayKeyService>;

const services = new WeakMap<DatabaseHandle, GatewayKeyService>();

/** The process's gateway-key service for this database (one cache per handle). */
export function gatewayKeysFor(deps: Deps): GatewayKeyService {
  let s = services.get(deps.database);
  if (!s) {
    s = gatewayKeyService(deps);
    services.set(deps.database, s);
  }
  return s;
}

/** Contract form (issue 29): verifies a raw key with the process's service for `deps.database`. */
export function verifyGatewayKey(deps: Deps, raw: string): Promise<GatewayKeyVerification> {
  return gatewayKeysFor(deps).verifyGatewayKey(raw);
}

/** After a committed revocation: drops the key's cached context here and on every other instance. */
export function invalidateGatewayKey(database: DatabaseHandle, keyId: number): Promise<void> {
  return invalidateCaches(database, { remoteSessionId: gatewayKeyFact(keyId) });
}
