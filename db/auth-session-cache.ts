// The per-instance cache of authenticated sessions, and the one rule that keeps it honest.
//
// api/middleware/auth.ts resolves a session token to (session, user, role, tenant, status, expiry) with
// one indexed query. On PostgreSQL that round trip is most of the cost of an authenticated request, so
// each API instance keeps the positive results here: token hash -> the resolved context, bounded by
// size (LRU) and age (TTL). Only usable sessions are cached; a refusal is always read again.
//
// The rule: every write that ends a session or changes a fact a session is authorised by (logout,
// password change, user deactivation / deletion / role / tenant / must_change_password, extra
// permissions, tenant status / deletion) calls `invalidateAuthSessions(database, scope)` AFTER its
// write has committed. That function is the only way entries leave the cache early:
//   - in this process it drops the matching entries at once (SQLite: one node, this is all there is);
//   - on PostgreSQL it also NOTIFYs `svc_auth_sessions`; every instance LISTENs on one dedicated
//     connection (db/pg-listen.ts) and drops the same entries on receipt (about a millisecond later).
//
// Races, and how they are closed:
//   - A request that read the database before a write committed could store the old facts after the
//     invalidation ran. Every invalidation bumps `generation`; a read stores its result only if the
//     generation is the one it saw before reading, so such a result is used once and never kept.
//   - A lost notification: while the LISTEN connection is down nothing is stored or served from the
//     cache (every request reads the database); when it ends and again when it is re-established
//     the whole cache is cleared. Until the first LISTEN connects the cache is simply off.
//   - An instance that crashes between its commit and its NOTIFY, or a LISTEN connection that dies
//     without the socket noticing: other instances may serve the old facts until the entry's TTL
//     (SVC_AUTH_SESSION_CACHE_TTL_MS, 30 s by default) expires. That is the bound, stated.
//   - Session expiry is checked by the caller on every hit against its clock, never cached as "valid".
//   - A write made with raw SQL outside the repositories (an operator's UPDATE) is not seen until the
//     TTL expires; set SVC_AUTH_SESSION_CACHE_SIZE=0 to turn the cache off.
//   - SQLite with more than one process on the file (a second API instance): SQLite has no NOTIFY, so
//     `sqliteCacheFresh` reads `PRAGMA data_version` (changes when ANOTHER connection commits) before
//     every lookup and clears the whole cache when it moved. One process (the embedded default) never
//     moves it, so the cache stays; several processes get correctness at the cost of more misses.
//
// One cache per database handle (the API and an in-process worker share it), created by the first
// authenticated request with the size and TTL from settings; the LISTEN connection closes with the
// handle. Keys are SHA-256 token hashes, never tokens.
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from './client.ts';
import { listenWithReconnect } from './pg-listen.ts';

export const AUTH_SESSIONS_CHANNEL = 'svc_auth_sessions';

/** What a write changed: one session, everything of one user, everything of one tenant's users, or all. */
export type AuthInvalidation = { sessionId: number } | { userId: number } | { tenantId: number } | 'all';

/** The facts an entry is dropped by. */
export interface CachedFacts {
  sessionId: number;
  userId: number;
  tenantId: number | null;
}

interface Entry<T> {
  value: T;
  facts: CachedFacts;
  storedAt: number;
}

export interface AuthSessionCacheStats {
  size: number;
  max: number;
  ttlMs: number;
  hits: number;
  misses: number;
  invalidations: number;
  clears: number;
  /** False on PostgreSQL while the LISTEN connection is down (nothing is cached then). */
  usable: boolean;
}

export class AuthSessionCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private gen = 0;
  private live: boolean;
  private counts = { hits: 0, misses: 0, invalidations: 0, clears: 0 };
  private readyWaiters: (() => void)[] = [];

  constructor(
    readonly max: number,
    readonly ttlMs: number,
    needsListener: boolean,
  ) {
    this.live = !needsListener && max > 0;
  }

  /** The generation to pass to `set` (read it before the database read). */
  get generation(): number {
    return this.gen;
  }

  get(key: string): T | undefined {
    if (!this.live) return undefined;
    const e = this.entries.get(key);
    if (!e) {
      this.counts.misses++;
      return undefined;
    }
    if (performance.now() - e.storedAt >= this.ttlMs) {
      this.entries.delete(key);
      this.counts.misses++;
      return undefined;
    }
    // Least recently used first: a hit moves the entry to the end.
    this.entries.delete(key);
    this.entries.set(key, e);
    this.counts.hits++;
    return e.value;
  }

  /** Stores a result read at `generation`; skipped when an invalidation ran since (or the cache is off). */
  set(key: string, value: T, facts: CachedFacts, generation: number): void {
    if (!this.live || generation !== this.gen) return;
    this.entries.delete(key);
    this.entries.set(key, { value, facts, storedAt: performance.now() });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Drops the entries a write made stale (this process only; see invalidateAuthSessions). */
  drop(scope: AuthInvalidation): void {
    this.gen++;
    this.counts.invalidations++;
    if (scope === 'all') {
      this.entries.clear();
      return;
    }
    for (const [key, e] of this.entries) {
      const f = e.facts;
      if (
        ('sessionId' in scope && f.sessionId === scope.sessionId) ||
        ('userId' in scope && f.userId === scope.userId) ||
        ('tenantId' in scope && f.tenantId === scope.tenantId)
      )
        this.entries.delete(key);
    }
  }

  /** LISTEN state changes: clear everything; cache only while listening. */
  setListening(listening: boolean): void {
    this.gen++;
    this.counts.clears++;
    this.entries.clear();
    this.live = listening && this.max > 0;
    if (listening) for (const w of this.readyWaiters.splice(0)) w();
  }

  /** Resolves once the cache is in use (at once on SQLite; after the first LISTEN on PostgreSQL). */
  ready(): Promise<void> {
    if (this.live || this.max <= 0) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  stats(): AuthSessionCacheStats {
    return { size: this.entries.size, max: this.max, ttlMs: this.ttlMs, usable: this.live, ...this.counts };
  }
}

interface Slot {
  origin: string;
  cache?: AuthSessionCache<unknown>;
  /** SQLite: the last `PRAGMA data_version` seen on this handle's connection. */
  dataVersion?: unknown;
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

/**
 * This handle's cache, created on first use with `opts` (later calls get the same cache). On
 * PostgreSQL it starts the LISTEN connection; the cache stays off until that connection is up.
 */
export function authSessionCache<T>(
  database: DatabaseHandle,
  opts: { max: number; ttlMs: number },
): AuthSessionCache<T> {
  const slot = slotOf(database);
  if (slot.cache) return slot.cache as AuthSessionCache<T>;
  const pg = database.dialect === 'postgres' && !!database.pool;
  const cache = new AuthSessionCache<T>(opts.max, opts.ttlMs, pg);
  slot.cache = cache as AuthSessionCache<unknown>;
  if (pg && opts.max > 0) {
    const listener = listenWithReconnect(database, AUTH_SESSIONS_CHANNEL, {
      notification: (payload) => {
        const space = payload.indexOf(' ');
        if (space < 0 || payload.slice(0, space) === slot.origin) return;
        const scope = parseScope(payload.slice(space + 1));
        // Unknown payload (a newer instance's format): fail safe, clear everything.
        cache.drop(scope ?? 'all');
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

/**
 * SQLite only (PostgreSQL resolves at once): clears this handle's cache when another connection (another
 * process on the same file) committed since the last call. Call before every lookup.
 */
export async function sqliteCacheFresh(database: DatabaseHandle): Promise<void> {
  if (database.dialect !== 'sqlite') return;
  const slot = slots.get(database);
  if (!slot?.cache) return;
  const [row] = await database.sql.query<{ data_version: unknown }>('PRAGMA data_version');
  const v = row?.data_version;
  if (slot.dataVersion !== undefined && v !== slot.dataVersion) slot.cache.drop('all');
  slot.dataVersion = v;
}

/** The cache of this handle if one was created (tests and metrics). */
export function existingAuthSessionCache(database: DatabaseHandle): AuthSessionCache<unknown> | undefined {
  return slots.get(database)?.cache;
}

const formatScope = (scope: AuthInvalidation): string =>
  scope === 'all'
    ? '*'
    : 'sessionId' in scope
      ? `s:${scope.sessionId}`
      : 'userId' in scope
        ? `u:${scope.userId}`
        : `t:${scope.tenantId}`;

function parseScope(text: string): AuthInvalidation | undefined {
  if (text === '*') return 'all';
  const n = Number(text.slice(2));
  if (text.length < 3 || text[1] !== ':' || !Number.isSafeInteger(n)) return undefined;
  if (text[0] === 's') return { sessionId: n };
  if (text[0] === 'u') return { userId: n };
  if (text[0] === 't') return { tenantId: n };
  return undefined;
}

/**
 * THE invalidation: call after a committed write that ends a session or changes what a session is
 * authorised by. Drops the matching entries in this process at once and, on PostgreSQL, tells every
 * other instance (NOTIFY; an error here propagates: the write stands, other instances fall back on
 * the TTL).
 */
export async function invalidateAuthSessions(
  database: DatabaseHandle,
  scope: AuthInvalidation,
): Promise<void> {
  const slot = slotOf(database);
  slot.cache?.drop(scope);
  if (database.dialect === 'postgres')
    await database.sql.query('SELECT pg_notify(?, ?)', [
      AUTH_SESSIONS_CHANNEL,
      `${slot.origin} ${formatScope(scope)}`,
    ]);
}
