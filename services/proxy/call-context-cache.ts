// The model proxy's per-instance cache of call contexts (db/repositories/proxy-tokens.ts: the token's
// issuance record, session state, user and tenant standing and the stored key's ciphertext, read in
// one five-table query). On PostgreSQL that read is a round trip per call; on SQLite ~25 us of CPU. Each
// process keeps the context of a token once a call made with it passed every check AND was answered
// by the provider (api/routes/remote/llm-proxy.ts): jti -> context, bounded by size (LRU) and age
// (TTL). A refusal, or a key the call could not use (egress refused, undecryptable), is never cached.
//
// What drops an entry before its TTL (`invalidateProxyContexts(database, scope)`, after the write has
// committed):
//   - token revocation and rotation and a session's end (services/proxy-tokens.ts revokeForSession and
//     rotate: every path that ends a session revokes its tokens there), scope { sessionId };
//   - any other writer may call it with { userId }, { tenantId } or 'all'.
// In this process the matching entries go at once (SQLite: one node). On PostgreSQL the scope is also
// sent with NOTIFY on `svc_proxy_contexts`; every instance LISTENs on one dedicated connection
// (db/pg-listen.ts) and drops the same entries on receipt (about a millisecond later).
//
// Races and bounds:
//   - A call that read the database before a revocation committed could store the old context after
//     the invalidation ran: every invalidation bumps `generation`, and a read stores its result only if
//     the generation is the one it saw before reading (such a result is used once, never kept).
//   - While the LISTEN connection is down nothing is stored or served (every call reads the database);
//     the cache is cleared when it ends and again when it is back. Until the first LISTEN the cache is off.
//   - Expiry is checked by the caller on every hit against its clock, never cached as "valid".
//   - Changes that are NOT pushed (a user disabled, a tenant suspended, a stored key replaced or
//     deleted, a session's state changed without revoking its tokens, raw SQL by an operator) are seen
//     when the entry's TTL ends: SVC_PROXY_CONTEXT_CACHE_TTL_MS, 1 s by default. That is the bound.
//     SVC_PROXY_CONTEXT_CACHE_SIZE=0 turns the cache off.
// One cache per database handle (the API and an in-process worker share it). Keys are jtis (a
// token's id, not the token); the ciphertext of the stored key is held, never its plaintext.
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../../db/client.ts';
import { listenWithReconnect } from '../../db/pg-listen.ts';
import type { ProxyCallContext } from '../../db/repositories/proxy-tokens.ts';

export const PROXY_CONTEXTS_CHANNEL = 'svc_proxy_contexts';

/** What a write changed: one session's tokens, everything of one user or one tenant, or all. */
export type ProxyContextInvalidation =
  | { sessionId: string }
  | { userId: number }
  | { tenantId: number }
  | 'all';

interface Entry {
  value: ProxyCallContext;
  storedAt: number;
}

export interface ProxyContextCacheStats {
  size: number;
  hits: number;
  misses: number;
  invalidations: number;
  usable: boolean;
}

export class ProxyContextCache {
  private readonly entries = new Map<string, Entry>();
  private gen = 0;
  private live: boolean;
  private readonly counts = { hits: 0, misses: 0, invalidations: 0 };
  private readyWaiters: (() => void)[] = [];

  constructor(
    readonly max: number,
    readonly ttlMs: number,
    needsListener: boolean,
  ) {
    this.live = !needsListener && max > 0;
  }

  /** Read before the database read; pass to `set`. */
  get generation(): number {
    return this.gen;
  }

  get(jti: string): ProxyCallContext | undefined {
    if (!this.live) return undefined;
    const e = this.entries.get(jti);
    if (e === undefined) {
      this.counts.misses++;
      return undefined;
    }
    if (performance.now() - e.storedAt >= this.ttlMs) {
      this.entries.delete(jti);
      this.counts.misses++;
      return undefined;
    }
    // Least recently used first: a hit moves the entry to the end.
    this.entries.delete(jti);
    this.entries.set(jti, e);
    this.counts.hits++;
    return e.value;
  }

  /** Stores a context read at `generation`; skipped if an invalidation ran since (or the cache is off). */
  set(jti: string, value: ProxyCallContext, generation: number): void {
    if (!this.live || generation !== this.gen) return;
    this.entries.delete(jti);
    this.entries.set(jti, { value, storedAt: performance.now() });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  drop(scope: ProxyContextInvalidation): void {
    this.gen++;
    this.counts.invalidations++;
    if (scope === 'all') {
      this.entries.clear();
      return;
    }
    for (const [jti, e] of this.entries) {
      const c = e.value;
      if (
        ('sessionId' in scope && c.sessionId === scope.sessionId) ||
        ('userId' in scope && c.userId === scope.userId) ||
        ('tenantId' in scope && c.tenantId === scope.tenantId)
      )
        this.entries.delete(jti);
    }
  }

  setListening(listening: boolean): void {
    this.gen++;
    this.entries.clear();
    this.live = listening && this.max > 0;
    if (listening) for (const w of this.readyWaiters.splice(0)) w();
  }

  /** Resolves once the cache is in use (at once on SQLite; after the first LISTEN on PostgreSQL). */
  ready(): Promise<void> {
    if (this.live || this.max <= 0) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  stats(): ProxyContextCacheStats {
    return { size: this.entries.size, usable: this.live, ...this.counts };
  }
}

interface Slot {
  origin: string;
  cache?: ProxyContextCache;
}

const slots = new WeakMap<DatabaseHandle, Slot>();

function slotOf(database: DatabaseHandle): Slot {
  let s = slots.get(database);
  if (!s) {
    s = { origin: randomUUID() };
    slots.set(database, s);
  }
  return s;
}

/** This handle's cache, created on first use (later calls get the same one); starts the LISTEN on PostgreSQL. */
export function proxyContextCache(
  database: DatabaseHandle,
  opts: { max: number; ttlMs: number },
): ProxyContextCache {
  const slot = slotOf(database);
  if (slot.cache) return slot.cache;
  const pg = database.dialect === 'postgres' && !!database.pool;
  const cache = new ProxyContextCache(opts.max, opts.ttlMs, pg);
  slot.cache = cache;
  if (pg && opts.max > 0) {
    const listener = listenWithReconnect(database, PROXY_CONTEXTS_CHANNEL, {
      notification: (payload) => {
        const space = payload.indexOf(' ');
        if (space < 0 || payload.slice(0, space) === slot.origin) return;
        // Unknown payload (a newer instance's format): fail safe, clear everything.
        cache.drop(parseScope(payload.slice(space + 1)) ?? 'all');
      },
      connected: () => cache.setListening(true),
      disconnected: () => cache.setListening(false),
    });
    const close = database.close.bind(database);
    database.close = async () => {
      await listener.stop();
      await close();
    };
  }
  return cache;
}

const formatScope = (scope: ProxyContextInvalidation): string =>
  scope === 'all'
    ? '*'
    : 'sessionId' in scope
      ? `s:${scope.sessionId}`
      : 'userId' in scope
        ? `u:${scope.userId}`
        : `t:${scope.tenantId}`;

function parseScope(text: string): ProxyContextInvalidation | undefined {
  if (text === '*') return 'all';
  if (text.length < 3 || text[1] !== ':') return undefined;
  const rest = text.slice(2);
  if (text[0] === 's') return { sessionId: rest };
  const n = Number(rest);
  if (!Number.isSafeInteger(n)) return undefined;
  if (text[0] === 'u') return { userId: n };
  if (text[0] === 't') return { tenantId: n };
  return undefined;
}

/**
 * THE invalidation: call after a committed write that revokes a token or changes what a token is
 * authorised by. Drops the matching entries here at once and, on PostgreSQL, NOTIFYs every other
 * instance (an error propagates: the write stands, other instances fall back on the TTL).
 */
export async function invalidateProxyContexts(
  database: DatabaseHandle,
  scope: ProxyContextInvalidation,
): Promise<void> {
  const slot = slotOf(database);
  slot.cache?.drop(scope);
  if (database.dialect === 'postgres')
    await database.sql.query('SELECT pg_notify(?, ?)', [
      PROXY_CONTEXTS_CHANNEL,
      `${slot.origin} ${formatScope(scope)}`,
    ]);
}
