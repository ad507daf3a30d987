// One viewer's live alert feed, shared by the SSE endpoint and the socket.io namespace: the alerts of
// the bus (services/alerts/bus.ts) the viewer may see (domain/alert-visibility.ts), optionally after a
// replay of the stored ones with id > `afterId` (SSE Last-Event-ID). Live alerts arriving during the
// replay are held back and sent after it, each id at most once. Live alerts come in commit order: on
// PostgreSQL an alert committed late (a lower id after a higher one) is still sent, not dropped; only
// ids at or below the client's Last-Event-ID are skipped (the client had them before it reconnected).
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../../db/client.ts';
import { alertsRepository } from '../../db/repositories/alerts.ts';
import { type AlertViewer, canSeeAlert } from '../../domain/alert-visibility.ts';
import { type AlertEvent, alertBusFor, toAlertEvent } from './bus.ts';

/** At most this many stored alerts are replayed on reconnect. */
export const REPLAY_LIMIT = 500;
const SENT_MEMORY = 2000;

export interface AlertFeed {
  /** Resolves when the replay is sent and live alerts flow. */
  ready: Promise<void>;
  close(): void;
}

export function openAlertFeed(
  deps: { database: DatabaseHandle; logger?: Logger },
  viewer: AlertViewer,
  send: (alert: AlertEvent) => void,
  afterId?: number,
): AlertFeed {
  const bus = alertBusFor(deps);
  const floor = afterId ?? 0;
  /** Ids sent (pruned far below the highest: the bus re-delivers nothing, late commits come soon). */
  const sent = new Set<number>();
  let highest = floor;
  let held: AlertEvent[] | undefined = afterId === undefined ? undefined : [];
  let closed = false;
  const deliver = (a: AlertEvent) => {
    if (closed || a.id <= floor || sent.has(a.id)) return;
    sent.add(a.id);
    if (a.id > highest) highest = a.id;
    if (sent.size > SENT_MEMORY) for (const id of sent) if (id < highest - SENT_MEMORY / 2) sent.delete(id);
    send(a);
  };
  const unsubscribe = bus.subscribe((a) => {
    if (!canSeeAlert(viewer, a)) return;
    if (held) held.push(a);
    else deliver(a);
  });
  const ready = (async () => {
    await bus.ready();
    if (afterId === undefined) return;
    const rows = await alertsRepository(deps.database.sql).visibleAfter(viewer, afterId, REPLAY_LIMIT);
    for (const r of rows) deliver(toAlertEvent(r));
    const pending = held ?? [];
    held = undefined;
    for (const a of pending.sort((x, y) => x.id - y.id)) deliver(a);
  })();
  return {
    ready,
    close() {
      closed = true;
      unsubscribe();
    },
  };
}
