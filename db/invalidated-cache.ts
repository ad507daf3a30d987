// Per-instance caches of identity facts, and the one rule that keeps them honest: the mechanism behind
// the authenticated-session cache (db/auth-session-cache.ts) and the model proxy's call-context cache
// (services/proxy/call-context-cache.ts). Each cache maps a key (a token hash, a proxy token's jti) to
// a value read from the database, bounded by size (LRU) and age (TTL); every entry carries the facts it
// depends on (user, tenant, login session, remote session) so that a write can drop exactly the
// entries it made stale, in EVERY cache of the process at once.
//
// The rule: every write that ends a session or changes a fact a cached value is authorised by calls
// `invalidateCaches(database, scope)` AFTER its write has committed (the per-cache wrappers,
// invalidateAuthSessions and invalidateProxyContexts, call it). That is the only way entries leave
// early:
//   - in this process it drops the matching entries of every cache at once (SQLite: one node, this
//     is all there is). A user deactivated or demoted, a tenant suspended, a login session ended or a
//     remote session's proxy tokens revoked reach the session cache AND the proxy cache alike;
//   - on PostgreSQL it also sends the scope with NOTIFY on `svc_cache_invalidations`; every instance
//     LISTENs on ONE dedicated connection per database handle (db/pg-listen.ts), whatever the number
//     of caches, and drops the same entries on receipt (about a millisecond later).
//
// Races, and how they are closed:
//   - A read that began before a write committed could store the old facts after the invalidation ran.
//     Every invalidation bumps the cache's `generation`; a read stores its result only if the
//     generation is the one it saw before reading, so such a result is used once and never kept.
//   - A lost notification: while the LISTEN connection is down nothing is stored or served from any
//     cache (every request reads the database); when it ends and again when it is re-established every
//     cache is cleared. Until the first LISTEN connects the caches are simply off.
//   - An instance that crashes between its commit and its NOTIFY, or a LISTEN connection that dies
//     without the socket noticing: other instances may serve the old facts until the entry's TTL ends.
//     The TTL of each cache is that bound (its settings say it).
//   - Expiry is checked by the caller on every hit against its clock, never cached as "valid".
//   - A write made with raw SQL outside the repositories is not seen until the TTL ends (size 0 turns
//     a cache off).
//   - SQLite with more than one process on the file: SQLite has no NOTIFY, so `sqliteCachesFresh`
//     reads `PRAGMA data_version` (it moves when ANOTHER connection commits) and clears every cache of
//     the handle when it moved. One process (the embedded default) never moves it.
//
// Caches live per database handle (the API and an in-process worker share them), one per name,
// created by their first use with the size and TTL from settings; the LISTEN connection closes with
// the handle. Keys are hashes or ids, never tokens; values hold ciphertexts, never plaintext secrets.
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from './client.ts';
import { listenWithReconnect } from './pg-listen.ts';

export const CACHE_INVALIDATIONS_CHANNEL = 'svc_cache_invalidations';

/**
 * What a write changed: one login session (auth `sessions.id`), one remote session (its proxy tokens),
 * everything of one user, everything of one tenant, or all.
 */
export type CacheInvalidation =
  | { authSessionId: number }
  | { remoteSessionId: string }
  | { userId: number }
  | { tenantId: number }
  | 'all';

/** The facts an entry is dropped by. */
export interface CachedFacts {
  userId: number;
  tenantId: number | null;
  authSessionId?: number;
  remoteSessionId?: string;
}

interface Entry<V> {
  value: V;
  facts: CachedFacts;
  storedAt: number;
}

export interface InvalidatedCacheStats {
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

const matches = (f: CachedFacts, scope: Exclude<CacheInvalidation, 'all'>): boolean =>
  'userId' in scope
    ? f.userId === scope.userId
    : 'tenantId' in scope
      ? f.tenantId === scope.tenantId
      : 'authSessionId' in scope
        ? f.authSessionId === scope.authSessionId
        : f.remoteSessionId === scope.remoteSessionId;

export class InvalidatedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private gen = 0;
  private live: boolean;
  private readonly counts = { hits: 0, misses: 0, invalidations: 0, clears: 0 };
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

  get(key: string): V | undefined {
    if (!this.live) return undefined;
    const e = this.entries.get(key);
    if (e === undefined) {
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

  /** Stores a value read at `generation`; skipped when an invalidation ran since (or the cache is off). */
  set(key: string, value: V, facts: CachedFacts, generation: number): void {
    if (!this.live || generation !== this.gen) return;
    this.entries.delete(key);
    this.entries.set(key, { value, facts, storedAt: performance.now() });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Drops the entries a write made stale (this cache only; see invalidateCaches). */
  drop(scope: CacheInvalidation): void {
    this.gen++;
    this.counts.invalidations++;
    if (scope === 'all') {
      this.entries.clear();
      return;
    }
    for (const [key, e] of this.entries) if (matches(e.facts, scope)) this.entries.delete(key);
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

  stats(): InvalidatedCacheStats {
    return { size: this.entries.size, max: this.max, ttlMs: this.ttlMs, usable: this.live, ...this.counts };
  }
}

interface Slot {
  /** This handle's id in NOTIFY payloads (its own notifications are already applied). */
  origin: string;
  caches: Map<string, InvalidatedCache<unknown>>;
  /** PostgreSQL: the LISTEN connection, started with the first cache that can hold anything. */
  listener?: { stop(): Promise<void> };
  listening: boolean;
  /** SQLite: the last `PRAGMA data_version` seen on this handle's connection. */
  dataVersion?: unknown;
  /** SQLite: batches of this process's writer thread being written (sqliteOwnWrites). */
  ownWrites?: number;
  /** Holders of state other than a cache that follow the same invalidations (watchInvalidations). */
  watchers: Set<(scope: CacheInvalidation) => void>;
}

const slots = new WeakMap<DatabaseHandle, Slot>();

function slotOf(database: DatabaseHandle): Slot {
  let s = slots.get(database);
  if (!s) {
    s = { origin: randomUUID(), caches: new Map(), listening: false, watchers: new Set() };
    slots.set(database, s);
  }
  return s;
}

/** PostgreSQL with a pool: other instances' invalidations arrive by LISTEN (SQLite has no NOTIFY). */
function canListen(database: DatabaseHandle): boolean {
  return database.dialect === 'postgres' && !!database.pool;
}

function startListener(database: DatabaseHandle, slot: Slot): void {
  const each = (f: (c: InvalidatedCache<unknown>) => void) => {
    for (const c of slot.caches.values()) f(c);
  };
  const tellWatchers = (scope: CacheInvalidation) => {
    for (const w of slot.watchers) w(scope);
  };
  slot.listener = listenWithReconnect(database, CACHE_INVALIDATIONS_CHANNEL, {
    notification: (payload) => {
      const space = payload.indexOf(' ');
      if (space < 0 || payload.slice(0, space) === slot.origin) return;
      // Unknown payload (a newer instance's format): fail safe, clear everything.
      const scope = parseScope(payload.slice(space + 1)) ?? 'all';
      each((c) => c.drop(scope));
      tellWatchers(scope);
    },
    connected: () => {
      slot.listening = true;
      each((c) => c.setListening(true));
      // Notifications sent while the connection was down are lost: watchers start over.
      tellWatchers('all');
    },
    disconnected: () => {
      slot.listening = false;
      each((c) => c.setListening(false));
    },
  });
  const close = database.close.bind(database);
  database.close = async () => {
    await slot.listener?.stop();
    await close();
  };
}

/**
 * This handle's cache called `name`, created on first use with `opts` (later calls get the same
 * cache). On PostgreSQL the first cache that can hold anything starts the handle's LISTEN connection;
 * a cache stays off until that connection is up.
 */
export function invalidatedCache<V>(
  database: DatabaseHandle,
  name: string,
  opts: { max: number; ttlMs: number },
): InvalidatedCache<V> {
  const slot = slotOf(database);
  const existing = slot.caches.get(name);
  if (existing) return existing as InvalidatedCache<V>;
  const pg = canListen(database);
  const cache = new InvalidatedCache<V>(opts.max, opts.ttlMs, pg);
  slot.caches.set(name, cache as InvalidatedCache<unknown>);
  if (pg && opts.max > 0) {
    if (!slot.listener) startListener(database, slot);
    else if (slot.listening) cache.setListening(true);
  }
  return cache;
}

/**
 * State that is not a cache but must follow the same writes (the model proxy's quota leases:
 * services/quota/leases.ts) gets every invalidation of this handle: those of this process at once,
 * on PostgreSQL those of other instances by the LISTEN connection (started here if no cache started
 * it), and 'all' whenever that connection (re)connects. Not called for SQLite's `data_version` moves
 * (sqliteCachesFresh): they mean "another process wrote something", which says nothing a watcher can
 * act on. Returns the unsubscribe.
 */
export function watchInvalidations(
  database: DatabaseHandle,
  watcher: (scope: CacheInvalidation) => void,
): () => void {
  const slot = slotOf(database);
  slot.watchers.add(watcher);
  if (canListen(database) && !slot.listener) startListener(database, slot);
  return () => slot.watchers.delete(watcher);
}

/** The cache `name` of this handle if one was created (tests and metrics). */
export function existingInvalidatedCache<V>(
  database: DatabaseHandle,
  name: string,
): InvalidatedCache<V> | undefined {
  return slots.get(database)?.caches.get(name) as InvalidatedCache<V> | undefined;
}

/**
 * SQLite only (PostgreSQL resolves at once): clears this handle's caches when another connection
 * (another process on the same file) committed since the last call. Call before a lookup.
 */
export async function sqliteCachesFresh(database: DatabaseHandle): Promise<void> {
  if (database.dialect !== 'sqlite') return;
  const slot = slots.get(database);
  if (!slot || slot.caches.size === 0 || (slot.ownWrites ?? 0) > 0) return;
  const [row] = await database.sql.query<{ data_version: unknown }>('PRAGMA data_version');
  const v = row?.data_version;
  if (slot.dataVersion !== undefined && v !== slot.dataVersion)
    for (const c of slot.caches.values()) c.drop('all');
  slot.dataVersion = v;
}

/**
 * SQLite: runs `write`, whose commits come from another connection of THIS process (the usage writer
 * thread's, services/usage/message-writer-thread.ts), so that they do not read as another process's
 * and clear every cache (they change no cached fact). Commits of other processes made before it are
 * applied first; the price is that one made while `write` runs is taken as ours: such an entry is
 * then kept until its cache's TTL. PostgreSQL: just `write` (its invalidations are NOTIFY).
 */
export async function sqliteOwnWrites<T>(database: DatabaseHandle, write: () => Promise<T>): Promise<T> {
  const slot = slots.get(database);
  if (database.dialect !== 'sqlite' || slot === undefined) return write();
  await sqliteCachesFresh(database);
  slot.ownWrites = (slot.ownWrites ?? 0) + 1;
  try {
    return await write();
  } finally {
    slot.ownWrites--;
    if (slot.ownWrites === 0) {
      const [row] = await database.sql.query<{ data_version: unknown }>('PRAGMA data_version');
      slot.dataVersion = row?.data_version;
    }
  }
}

const formatScope = (scope: CacheInvalidation): string =>
  scope === 'all'
    ? '*'
    : 'userId' in scope
      ? `u:${scope.userId}`
      : 'tenantId' in scope
        ? `t:${scope.tenantId}`
        : 'authSessionId' in scope
          ? `a:${scope.authSessionId}`
          : `r:${scope.remoteSessionId}`;

function parseScope(text: string): CacheInvalidation | undefined {
  if (text === '*') return 'all';
  if (text.length < 3 || text[1] !== ':') return undefined;
  const rest = text.slice(2);
  if (text[0] === 'r') return { remoteSessionId: rest };
  const n = Number(rest);
  if (!Number.isSafeInteger(n)) return undefined;
  if (text[0] === 'u') return { userId: n };
  if (text[0] === 't') return { tenantId: n };
  if (text[0] === 'a') return { authSessionId: n };
  return undefined;
}

/**
 * THE invalidation: call after a committed write that ends a session, revokes a token or changes what
 * one is authorised by. Drops the matching entries of every cache in this process at once and, on
 * PostgreSQL, tells every other instance (NOTIFY; an error here propagates: the write stands, other
 * instances fall back on their TTL).
 */
export async function invalidateCaches(database: DatabaseHandle, scope: CacheInvalidation): Promise<void> {
  const slot = slotOf(database);
  for (const c of slot.caches.values()) c.drop(scope);
  for (const w of slot.watchers) w(scope);
  if (database.dialect === 'postgres')
    await database.sql.query('SELECT pg_notify(?, ?)', [
      CACHE_INVALIDATIONS_CHANNEL,
      `${slot.origin} ${formatScope(scope)}`,
    ]);
}
