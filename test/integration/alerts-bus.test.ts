// The alert bus hand-over (services/alerts/bus.ts) across TWO instances on one database: an alert
// raised in this process reaches this process's subscribers before raiseAlert returns (the row is
// handed over, no read); the other instance gets the row from the PostgreSQL notification payload, or
// by the cursor read when the alert is too large for a payload (and on SQLite, by its poll). Either
// way every subscriber gets exactly the stored row, every alert once, in id order.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { alertsRepository } from '../../db/repositories/alerts.ts';
import { alertViewer } from '../../domain/alert-visibility.ts';
import { type AlertEvent, alertBusFor } from '../../services/alerts/bus.ts';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

let testDb: TestDatabase;
let appA: TestApp;
let appB: TestApp;
const seenA: AlertEvent[] = [];
const seenB: AlertEvent[] = [];
const unsubscribe: (() => void)[] = [];

before(async () => {
  testDb = await createTestDatabase();
  appA = await startTestApp({ testDb });
  appB = await startTestApp({ testDb });
  for (const [app, seen] of [
    [appA, seenA],
    [appB, seenB],
  ] as const) {
    const bus = alertBusFor(app.deps);
    unsubscribe.push(bus.subscribe((a) => seen.push(a)));
    await bus.ready();
  }
});
after(async () => {
  for (const u of unsubscribe) u();
  await appA?.close();
  await appB?.close();
  await testDb?.drop();
});

const until = async (pred: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};
const raise = (message: string) =>
  raiseAlert(appA.database, {
    alertId: `bus-${randomUUID()}`,
    alertType: 'security',
    severity: 'critical',
    title: 'bus test',
    message,
    userId: null,
    tenantId: null,
  });
/** The row as every reader of the table sees it (a system admin's view sees every tenant-wide alert). */
const stored = async (id: number) => {
  const viewer = alertViewer(
    { id: -1, role: 'platform_admin', tenantId: null },
    new Set(['admin_access']),
    'info',
  );
  const rows = await alertsRepository(appA.database.sql).visibleAfter(viewer, id - 1, 1);
  assert.equal(rows[0]?.id, id);
  const { read: _read, ...event } = rows[0]!;
  return event;
};

test('the raising instance hands its alert over before raiseAlert returns; the other gets the stored row', async () => {
  const id = await raise('small');
  assert.ok(id);
  // Delivered synchronously: a read of the table could not have answered yet.
  assert.deepEqual(
    seenA.filter((a) => a.id === id).map((a) => a.message),
    ['small'],
  );
  await until(() => seenB.some((a) => a.id === id), 'instance B');
  const row = await stored(id);
  assert.deepEqual({ ...seenA.find((a) => a.id === id) }, row);
  assert.deepEqual({ ...seenB.find((a) => a.id === id) }, row);
});

test('an alert too large for a notification payload is read by the other instance, complete', async () => {
  const big = `x${'é'.repeat(6000)}`; // 12,001 bytes: over PostgreSQL's 8,000-byte payload limit
  const id = await raise(big);
  assert.ok(id);
  await until(() => seenB.some((a) => a.id === id), 'instance B');
  assert.equal(seenB.find((a) => a.id === id)!.message, big);
  assert.deepEqual({ ...seenB.find((a) => a.id === id) }, await stored(id));
});

test('concurrent alerts reach both instances exactly once', async () => {
  const ids = (await Promise.all(Array.from({ length: 25 }, (_, i) => raise(`burst ${i}`)))) as number[];
  await until(
    () => ids.every((id) => seenA.some((a) => a.id === id) && seenB.some((a) => a.id === id)),
    'burst',
  );
  for (const seen of [seenA, seenB]) {
    // Commit order, which on PostgreSQL need not be id order for concurrent inserts.
    const order = seen.map((a) => a.id);
    assert.equal(new Set(order).size, order.length, 'each alert once');
  }
});
