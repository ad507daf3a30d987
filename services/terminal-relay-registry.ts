// Who holds the live terminal relay of a remote session (spec document 1, overview item 6): the browser
// WebSocket and the agent's terminal channel meet in ONE API instance's memory, so every instance must
// agree which one. The registry maps session id -> (owner instance address, owner id, expiry).
//
// Protocol:
//  - claim(session): one atomic upsert that succeeds when there is no row, the row is ours, or its
//    expiry has passed (an owner that died without releasing is taken over after at most `ttlMs`).
//    Otherwise the current owner's address is returned and the caller answers the browser with close
//    code 3010 and that address.
//  - the owner refreshes its rows every ttl/3 while a relay lives, and deletes them when the last
//    terminal of the session on this instance closes (only its own row: `instance_id` must match).
// Store: PostgreSQL table `terminal_relays` (migration 0030). On SQLite (one node by definition) and
// whenever a PostgreSQL statement fails, the registry answers from an in-process map instead (the
// spec's "falls back to in-process mode"); the failure is logged once per outage, and the next call
// tries PostgreSQL again. In-process mode cannot see other instances: each instance then owns the
// relays it holds, which is right for one node and degrades to "no 3010" for several.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/client.ts';

export const RELAY_TTL_MS = 15_000;

export type ClaimResult = { owner: true } | { owner: false; instanceUrl: string };

export interface TerminalRelayRegistry {
  /** A random id of this process. */
  readonly instanceId: string;
  /** 'shared' while PostgreSQL answers, 'in-process' on SQLite or after a store failure. */
  mode(): 'shared' | 'in-process';
  claim(sessionId: string, instanceUrl: string): Promise<ClaimResult>;
  refresh(sessionIds: string[], instanceUrl: string): Promise<void>;
  release(sessionId: string): Promise<void>;
}

export function terminalRelayRegistry(opts: {
  database: DatabaseHandle;
  now: () => Date;
  logger: Logger;
  ttlMs?: number;
}): TerminalRelayRegistry {
  const { database, now, logger } = opts;
  const ttlMs = opts.ttlMs ?? RELAY_TTL_MS;
  const instanceId = randomUUID();
  const local = new Map<string, { instanceUrl: string; expiresAt: number }>();
  let failing = database.dialect !== 'postgres';
  let warned = false;

  /** Runs `shared` on PostgreSQL; on SQLite or a failure, `fallback` (the failure logged once). */
  async function withStore<T>(shared: () => Promise<T>, fallback: () => T): Promise<T> {
    if (database.dialect !== 'postgres') return fallback();
    try {
      const r = await shared();
      if (failing) logger.info('terminal relay registry: shared store reachable again');
      failing = false;
      warned = false;
      return r;
    } catch (err) {
      failing = true;
      if (!warned)
        logger.warn(
          { err: (err as Error).message },
          'terminal relay registry: shared store failed; using in-process registration',
        );
      warned = true;
      return fallback();
    }
  }

  const localClaim = (sessionId: string, instanceUrl: string): ClaimResult => {
    local.set(sessionId, { instanceUrl, expiresAt: now().getTime() + ttlMs });
    return { owner: true };
  };

  return {
    instanceId,
    mode: () => (failing ? 'in-process' : 'shared'),
    claim: (sessionId, instanceUrl) =>
      withStore(
        async () => {
          const at = now();
          const expires = new Date(at.getTime() + ttlMs);
          const won = await database.sql.query<{ instance_id: string }>(
            `INSERT INTO terminal_relays (session_id, instance_url, instance_id, expires_at, updated_at)
             VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (session_id) DO UPDATE
               SET instance_url = EXCLUDED.instance_url, instance_id = EXCLUDED.instance_id,
                   expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
               WHERE terminal_relays.instance_id = EXCLUDED.instance_id OR terminal_relays.expires_at <= ?
             RETURNING instance_id`,
            [sessionId, instanceUrl, instanceId, expires, at, at],
          );
          if (won.length) return { owner: true } as const;
          const [row] = await database.sql.query<{ instance_url: string }>(
            'SELECT instance_url FROM terminal_relays WHERE session_id = ?',
            [sessionId],
          );
          // Released between the two statements: try once more.
          if (!row) return (await claimAgain(sessionId, instanceUrl)) as ClaimResult;
          return { owner: false, instanceUrl: row.instance_url } as const;
        },
        () => localClaim(sessionId, instanceUrl),
      ),
    refresh: (sessionIds, instanceUrl) =>
      withStore(
        async () => {
          if (!sessionIds.length) return;
          const at = now();
          const expires = new Date(at.getTime() + ttlMs);
          for (const sessionId of sessionIds)
            await database.sql.query(
              `INSERT INTO terminal_relays (session_id, instance_url, instance_id, expires_at, updated_at)
               VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (session_id) DO UPDATE
                 SET expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at
                 WHERE terminal_relays.instance_id = EXCLUDED.instance_id`,
              [sessionId, instanceUrl, instanceId, expires, at],
            );
        },
        () => {
          for (const id of sessionIds) localClaim(id, instanceUrl);
        },
      ),
    release: (sessionId) =>
      withStore(
        async () => {
          local.delete(sessionId);
          await database.sql.query('DELETE FROM terminal_relays WHERE session_id = ? AND instance_id = ?', [
            sessionId,
            instanceId,
          ]);
        },
        () => {
          local.delete(sessionId);
        },
      ),
  };

  async function claimAgain(sessionId: string, instanceUrl: string): Promise<ClaimResult> {
    const at = now();
    const won = await database.sql.query<{ instance_id: string }>(
      `INSERT INTO terminal_relays (session_id, instance_url, instance_id, expires_at, updated_at)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING RETURNING instance_id`,
      [sessionId, instanceUrl, instanceId, new Date(at.getTime() + ttlMs), at],
    );
    if (won.length) return { owner: true };
    const [row] = await database.sql.query<{ instance_url: string }>(
      'SELECT instance_url FROM terminal_relays WHERE session_id = ?',
      [sessionId],
    );
    return row ? { owner: false, instanceUrl: row.instance_url } : { owner: true };
  }
}
