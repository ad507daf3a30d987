// The alert bus: every new row of `alerts`, raised on ANY API instance or worker, delivered once to
// each subscriber in this process (SSE streams, the socket.io namespace, robot webhook delivery).
//
// The table is the source of truth and is followed by id with a cursor: the bus reads rows with
// id > cursor. It wakes every POLL_MS (~200 ms on SQLite); on PostgreSQL `insertAlert` NOTIFYs
// `svc_alerts` and the bus LISTENs on one dedicated connection, so it wakes at once and the poll is only
// a fallback (every PG_POLL_MS) for a lost connection. It starts lazily on the first subscribe and
// stops when the database handle closes (the app's resources close with the handle).
//
// Known limit (PostgreSQL): ids are taken from a sequence before commit, so a transaction holding a
// lower id that commits after a higher one was read would be skipped; alert inserts are single
// statements or short transactions, so a short re-read window (REREAD) catches late commits, with
// the ids already delivered remembered so nothing is emitted twice.
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import { listenWithReconnect } from '../../db/pg-listen.ts';
import { ALERTS_CHANNEL, type AlertRow, alertsAfter, maxAlertId } from '../../db/repositories/alerts.ts';

export interface AlertEvent {
  id: number;
  alert_id: string;
  alert_type: string | null;
  severity: 'info' | 'warning' | 'critical';
  title: string;
  message: string | null;
  user_id: number | null;
  tenant_id: number | null;
  /** ISO 8601. */
  created_at: string;
}

export interface AlertBus {
  /** Calls `listener` for every alert stored after the bus started; returns the unsubscribe. */
  subscribe(listener: (alert: AlertEvent) => void): () => void;
  /** Resolves once the bus follows the table (alerts stored after this are delivered). */
  ready(): Promise<void>;
}

/** Internal: reads new rows now (an alert was just stored through this handle). */
type Wakeable = AlertBus & { wake(): void };

const POLL_MS = 200;
const PG_POLL_MS = 2000;
const BATCH = 500;
/** Ids this far below the cursor are read again (PostgreSQL late commits); see the header. */
const REREAD = 50;

const buses = new WeakMap<object, Wakeable>();

/**
 * Wakes this process's bus of `database` at once, when it runs (raiseAlert calls it after an insert,
 * so local subscribers do not wait for the next poll); other instances wake by NOTIFY or their poll.
 */
export function wakeAlertBus(database: object): void {
  buses.get(database)?.wake();
}

/** The one alert bus of this database handle (API and an in-process worker share it). */
export function alertBusFor(deps: { database: DatabaseHandle; logger?: Logger }): AlertBus {
  let bus = buses.get(deps.database);
  if (!bus) {
    bus = createAlertBus(deps.database, deps.logger);
    buses.set(deps.database, bus);
  }
  return bus;
}

export function toAlertEvent(r: AlertRow): AlertEvent {
  return {
    id: r.id,
    alert_id: r.alert_id,
    alert_type: r.alert_type,
    severity: r.severity,
    title: r.title,
    message: r.message,
    user_id: r.user_id,
    tenant_id: r.tenant_id,
    created_at: r.created_at,
  };
}

function createAlertBus(database: DatabaseHandle, logger?: Logger): Wakeable {
  const listeners = new Set<(alert: AlertEvent) => void>();
  const postgres = database.dialect === 'postgres';
  let started: Promise<void> | undefined;
  let stopped = false;
  /** Set once the cursor is known: no read happens before (it would replay the whole table). */
  let running = false;
  let cursor = 0;
  /** The highest id when the bus started: older alerts are never emitted. */
  let floor = 0;
  /** Ids delivered within the re-read window (PostgreSQL only). */
  const recent = new Set<number>();
  let timer: NodeJS.Timeout | undefined;
  let reading = false;
  let again = false;
  let listener: { stop(): Promise<void> } | undefined;

  const emit = (row: AlertRow) => {
    const event = toAlertEvent(row);
    for (const l of [...listeners]) {
      try {
        l(event);
      } catch (err) {
        logger?.warn({ err }, 'alert bus listener failed');
      }
    }
  };

  const read = async () => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        const from = postgres ? Math.max(0, cursor - REREAD) : cursor;
        const rows = await alertsAfter(database.sql, from, BATCH);
        for (const row of rows) {
          if (row.id <= floor || recent.has(row.id)) continue;
          if (postgres) recent.add(row.id);
          if (row.id > cursor) cursor = row.id;
          emit(row);
        }
        if (postgres) for (const id of recent) if (id <= cursor - REREAD) recent.delete(id);
        if (rows.length === BATCH) again = true;
      } while (again && !stopped);
    } catch (err) {
      if (!stopped) logger?.warn({ err }, 'alert bus read failed');
    } finally {
      reading = false;
    }
  };

  const tick = () => {
    if (stopped) return;
    timer = setTimeout(
      () => {
        void read().finally(tick);
      },
      postgres ? PG_POLL_MS : POLL_MS,
    );
    timer.unref();
  };

  const start = () => {
    started ??= (async () => {
      cursor = await maxAlertId(database.sql);
      floor = cursor;
      running = true;
      if (postgres && database.pool)
        listener = listenWithReconnect(database, ALERTS_CHANNEL, {
          notification: () => void read(),
          connected: () => void read(),
        });
      tick();
      const close = database.close.bind(database);
      database.close = async () => {
        stopped = true;
        clearTimeout(timer);
        await listener?.stop();
        await close();
      };
    })();
    return started;
  };

  return {
    subscribe(l) {
      listeners.add(l);
      void start().catch((err) => logger?.warn({ err }, 'alert bus start failed'));
      return () => {
        listeners.delete(l);
      };
    },
    ready: () => start(),
    wake() {
      if (running && !stopped) void read();
    },
  };
}
