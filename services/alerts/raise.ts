// Raising an alert (spec document 2, "Alerts"): the one call every producer uses (content filter,
// security events, anomaly detection; quota alerts write theirs in their own transaction through the
// same repository function). Delivery (SSE, socket.io, robot webhooks) reads new rows of `alerts`,
// so an alert raised on any API instance or worker reaches every subscriber.
import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../../db/client.ts';
import { type AlertInsert, insertAlert, insertedAlertRow } from '../../db/repositories/alerts.ts';
import { wakeAlertBus } from './bus.ts';

export type RaiseAlertInput = Omit<AlertInsert, 'alertId' | 'at'> & { alertId?: string; at?: Date };

/**
 * Stores the alert; returns its row id, or undefined when an alert with the same `alertId` was
 * raised before (pass a stable id to raise something at most once).
 */
export async function raiseAlert(database: Pick<DatabaseHandle, 'sql'>, input: RaiseAlertInput) {
  const alert: AlertInsert = {
    ...input,
    alertId: input.alertId ?? randomUUID(),
    at: input.at ?? new Date(),
  };
  const id = await insertAlert(database.sql, alert);
  // Stored through the handle itself (a single statement, committed): this process's bus gets the row
  // without reading it. A caller inside a transaction passes `{sql}`, which no bus is keyed on, so its
  // alert is delivered after commit (NOTIFY on PostgreSQL, the poll on SQLite).
  if (id !== undefined) wakeAlertBus(database, insertedAlertRow(id, alert));
  return id;
}
