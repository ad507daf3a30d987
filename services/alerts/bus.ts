// The alert bus: every new row of `alerts`, raised on ANY API instance or worker, delivered once to
// each subscriber in this process (SSE streams, the socket.io namespace, robot webhook delivery).
//
// The table is the source of truth and is followed by id with a cursor: the bus reads rows with
// id > cursor. It wakes every POLL_MS (~200 ms on SQLite); on PostgreSQL `insertAlert` NOTIFYs
// `svc_alerts` and the bus LISTENs on one dedicated connection, so it wakes at once and the poll is only
// a fallback (every PG_POLL_MS) for a lost connection. It starts lazily on the first subscribe and
// stops when the database handle closes (the app's resources close with the handle).
//
// Each instance reads a new alert at most once and fans it out in memory (every subscriber gets the
// same event object; each decides visibility itself through domain/alert-visibility.ts). In the usual
// case it does not read it at all: the PostgreSQL notification carries the row (`<id> <json>`), and an
// alert raised in this process is handed over by raiseAlert (`wakeAlertBus(database, row)`) when it is
// the very next id after the cursor (nothing can be missing before it). Anything else (a gap, a row
// too large for the payload, a read in flight, a lost notification) falls back to the cursor read.
// Delivery follows commit order. Measured in bench/alerts/README.md.
//
// Known limit (PostgreSQL): ids are taken from a sequence before commit, so a transaction holding a
// lower id that commits after a higher one was read would be skipped; alert inserts are single
// statements or short transactions, so a short re-read window (REREAD) catches late commits, with
// the ids already delivered remembered so nothing is emitted twice.
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import { listenWithReconnect } from '../../db/pg-listen.ts';
import {
  ALERTS_CHANNEL,
  type AlertRow,
  alertOfNotification,
  alertsAfter,
  maxAlertId,
} from '../../db/repositories/alerts.ts';

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

/** Internal: an alert was just stored through this handle (its row, when known). */
type Wakeable = AlertBus & { wake(row?: AlertRow): void };

const POLL_MS = 200;
const PG_POLL_MS = 2000;
const BATCH = 500;
/** Ids this far below the cursor are read again (PostgreSQL late commits); see the header. */
const REREAD = 50;

const buses = new WeakMap<object, Wakeable>();

/**
 * Wakes this process's bus of `database` at once, when it runs (raiseAlert calls it after an insert,
 * with the committed row, so local subscribers neither wait for the next poll nor for a read); other
 * instances wake by NOTIFY or their poll.
 */
export function wakeAlertBus(database: object, row?: AlertRow): void {
  buses.get(database)?.wake(row);
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

  /** Delivers a row known to be committed without reading it, when that cannot skip or repeat one. */
  const offer = (row: AlertRow, commitOrder: boolean) => {
    if (!running || stopped || row.id <= floor || recent.has(row.id)) return;
    // A read in flight may or may not see the row: it reads again and delivers it in order.
    if (reading) return void read();
    if (!postgres) {
      // SQLite: one writer at a time, ids in commit order; only the next id is certainly not past a
      // row of another process that the cursor has not read yet.
      if (row.id !== cursor + 1) return void read();
      cursor = row.id;
      emit(row);
      return;
    }
    // PostgreSQL: notifications arrive in commit order, which is the order a cursor read would find
    // the rows in; a row raised here is handed over only when it is the next id (otherwise the
    // notification of a lower id committed on another instance might still be on its way).
    if (!commitOrder && row.id !== cursor + 1) return void read();
    recent.add(row.id);
    if (row.id > cursor) cursor = row.id;
    emit(row);
  };

  const notified = (payload: string) => {
    const n = alertOfNotification(payload);
    if (n?.row) offer(n.row, true);
    else void read();
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
          notification: notified,
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
    wake(row) {
      if (!running || stopped) return;
      if (row) offer(row, false);
      else void read();
    },
  };
}
