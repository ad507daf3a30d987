// Wake-ups for the remote runtime: "a command was queued for machine M", "session S has new output",
// "command C was answered". A wake-up is only a hint to re-read the database (the source of truth), so a
// spurious one is harmless and a lost one costs at most the waiter's safety re-check interval.
//
// Within one process an EventEmitter delivers at once. On PostgreSQL every publish is also sent with
// NOTIFY and every instance LISTENs on one dedicated connection, so a long poll held by instance A wakes
// when instance B queues a command. One bus per database handle (the API and an in-process worker share
// the handle, hence the bus).
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { DatabaseHandle } from '../db/client.ts';
import { listenWithReconnect } from '../db/pg-listen.ts';

const CHANNEL = 'svc_remote_bus';

export const topics = {
  machineCommands: (machineId: string) => `m:${machineId}`,
  sessionOutput: (sessionId: string) => `s:${sessionId}`,
  commandResponse: (commandId: string) => `c:${commandId}`,
  /** Activity events of an autonomous workflow were stored (services/autonomous/activity-bus.ts). */
  autonomousActivity: (workflowId: string) => `a:${workflowId}`,
};

export interface RemoteBus {
  publish(topic: string): Promise<void>;
  subscribe(topic: string, onWake: () => void): () => void;
  /** Wakes this process's waiters on the topic only (no NOTIFY): for hints no other instance needs. */
  wakeLocal(topic: string): void;
  /**
   * Subscribes, then runs `check` until it returns a value, waking on the topic or every `recheckMs`;
   * resolves undefined when `timeoutMs` passes or `signal` aborts. Subscribing before the first check
   * means a publish between check and wait is never missed.
   */
  waitFor<T>(
    topic: string,
    check: () => Promise<T | undefined>,
    opts: { timeoutMs: number; recheckMs?: number; signal?: AbortSignal },
  ): Promise<T | undefined>;
}

const buses = new WeakMap<DatabaseHandle, RemoteBus>();

export function remoteBus(database: DatabaseHandle): RemoteBus {
  let bus = buses.get(database);
  if (!bus) {
    bus = createBus(database);
    buses.set(database, bus);
  }
  return bus;
}

function createBus(database: DatabaseHandle): RemoteBus {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const origin = randomUUID();
  const listener =
    database.dialect === 'postgres' && database.pool
      ? startListener(database, origin, (topic) => local.emit(topic))
      : undefined;

  const bus: RemoteBus = {
    async publish(topic) {
      local.emit(topic);
      if (database.dialect === 'postgres') {
        await database.sql
          .query('SELECT pg_notify(?, ?)', [CHANNEL, `${origin} ${topic}`])
          .catch(() => undefined);
      }
    },
    wakeLocal(topic) {
      local.emit(topic);
    },
    subscribe(topic, onWake) {
      local.on(topic, onWake);
      // After a LISTEN reconnect notifications may have been missed: every waiter re-checks.
      local.on('*', onWake);
      return () => {
        local.off(topic, onWake);
        local.off('*', onWake);
      };
    },
    async waitFor(topic, check, { timeoutMs, recheckMs = 5000, signal }) {
      const deadline = Date.now() + timeoutMs;
      let wake: () => void = () => {};
      let woken = false;
      const unsubscribe = bus.subscribe(topic, () => {
        woken = true;
        wake();
      });
      const onAbort = () => wake();
      signal?.addEventListener('abort', onAbort);
      try {
        for (;;) {
          woken = false;
          const found = await check();
          if (found !== undefined) return found;
          const left = deadline - Date.now();
          if (left <= 0 || signal?.aborted) return undefined;
          if (woken) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(left, recheckMs));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = () => {};
        }
      } finally {
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
      }
    },
  };
  if (listener) {
    // The LISTEN connection lives as long as the database handle: close it with the handle.
    const close = database.close.bind(database);
    database.close = async () => {
      await listener.stop();
      await close();
    };
  }
  return bus;
}

/** Follows the other instances' events (a payload is `<origin> <topic>`; our own are skipped). */
function startListener(database: DatabaseHandle, origin: string, emit: (topic: string) => void) {
  return listenWithReconnect(database, CHANNEL, {
    notification: (payload) => {
      const space = payload.indexOf(' ');
      if (space < 0 || payload.slice(0, space) === origin) return;
      emit(payload.slice(space + 1));
    },
    connected: () => emit('*'),
  });
}
