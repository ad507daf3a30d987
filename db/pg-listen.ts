// A PostgreSQL LISTEN on its own connection that survives drops: the one mechanism behind the
// cross-instance buses (services/remote-bus.ts, services/alerts/bus.ts). A dropped connection is
// reconnected after RECONNECT_MS; `onConnected` runs after every (re)connect, so a caller can catch
// up on what it may have missed while disconnected.
import pg from 'pg';
import type { DatabaseHandle } from './client.ts';

const RECONNECT_MS = 1000;

export function listenWithReconnect(
  database: DatabaseHandle,
  channel: string,
  on: {
    notification: (payload: string) => void;
    connected: () => void;
    /** Runs when an established LISTEN connection ends (optional; notifications may be lost until `connected`). */
    disconnected?: () => void;
  },
): { stop(): Promise<void> } {
  const options = database.pool!.options;
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ ...options, connectionString: options.connectionString } as pg.ClientConfig);
    c.on('error', () => undefined);
    c.on('notification', (msg) => on.notification(msg.payload ?? ''));
    c.on('end', () => {
      if (client === c) {
        client = undefined;
        on.disconnected?.();
      }
      schedule();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      if (stopped) {
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
      on.connected();
    } catch {
      await c.end().catch(() => undefined);
      schedule();
    }
  };
  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, RECONNECT_MS);
    timer.unref();
  };
  void connect();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
