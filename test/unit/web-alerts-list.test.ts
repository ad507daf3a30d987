// The alerts page's state (web/src/pages/alerts/alert-list.ts): loading a page, live alerts from the
// SSE stream (newest on top, a replayed id changes nothing, an alert outside the filter only counts
// as unread, later pages are not reshuffled), mark read, read all and delete keeping the counts right.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Alert, alertsReducer, initialAlerts } from '../../web/src/pages/alerts/alert-list.ts';

const alert = (id: number, over: Partial<Alert> = {}): Alert => ({
  id,
  alert_id: `a-${id}`,
  alert_type: 'security',
  severity: 'warning',
  title: `Alert ${id}`,
  message: null,
  user_id: 1,
  tenant_id: 1,
  read: false,
  created_at: new Date(Date.UTC(2026, 0, 1, 0, id)).toISOString(),
  ...over,
});

const loaded = alertsReducer(initialAlerts, {
  kind: 'loaded',
  alerts: [alert(2), alert(1, { read: true })],
  total: 2,
  unread: 1,
});

test('a live alert goes on top, counts as unread, and a replay of it changes nothing', () => {
  const { read: _r, ...live } = alert(3);
  const s = alertsReducer(loaded, { kind: 'live', alert: live, filter: {}, onFirstPage: true });
  assert.deepEqual(
    s.alerts.map((a) => a.id),
    [3, 2, 1],
  );
  assert.equal(s.alerts[0]?.read, false);
  assert.equal(s.total, 3);
  assert.equal(s.unread, 2);
  const again = alertsReducer(s, { kind: 'live', alert: live, filter: {}, onFirstPage: true });
  assert.equal(again, s);
  // An alert already on the loaded page (stream replay after a reconnect) is not added either.
  assert.equal(
    alertsReducer(loaded, { kind: 'live', alert: alert(2), filter: {}, onFirstPage: true }),
    loaded,
  );
});

test('a live alert outside the filter or while on a later page only moves the counts', () => {
  const info = alertsReducer(loaded, {
    kind: 'live',
    alert: alert(4, { severity: 'info' }),
    filter: { severity: 'critical' },
    onFirstPage: true,
  });
  assert.deepEqual(
    info.alerts.map((a) => a.id),
    [2, 1],
  );
  assert.equal(info.total, 2);
  assert.equal(info.unread, 2);
  const later = alertsReducer(loaded, { kind: 'live', alert: alert(5), filter: {}, onFirstPage: false });
  assert.deepEqual(
    later.alerts.map((a) => a.id),
    [2, 1],
  );
  assert.equal(later.total, 3);
  assert.equal(later.unread, 2);
  const typed = alertsReducer(loaded, {
    kind: 'live',
    alert: alert(6),
    filter: { type: 'quota' },
    onFirstPage: true,
  });
  assert.equal(typed.alerts.length, 2);
});

test('mark read, read all and delete keep the unread count and total right', () => {
  const r = alertsReducer(loaded, { kind: 'read', alert_id: 'a-2' });
  assert.equal(r.unread, 0);
  assert.equal(r.alerts[0]?.read, true);
  assert.equal(alertsReducer(r, { kind: 'read', alert_id: 'a-2' }), r, 'reading twice is a no-op');
  assert.equal(alertsReducer(loaded, { kind: 'read', alert_id: 'nope' }), loaded);
  const all = alertsReducer(loaded, { kind: 'read-all' });
  assert.ok(all.alerts.every((a) => a.read));
  assert.equal(all.unread, 0);
  const del = alertsReducer(loaded, { kind: 'removed', alert_id: 'a-2' });
  assert.deepEqual(
    del.alerts.map((a) => a.id),
    [1],
  );
  assert.equal(del.total, 1);
  assert.equal(del.unread, 0);
  const delRead = alertsReducer(loaded, { kind: 'removed', alert_id: 'a-1' });
  assert.equal(delRead.unread, 1);
});

test('a live alert that arrives while a load is in flight is kept by that load (first page, same filter)', () => {
  const { read: _r, ...live } = alert(3);
  const during = alertsReducer(loaded, { kind: 'live', alert: live, filter: {}, onFirstPage: true });
  // The load answers without alert 3 (it was read before the alert was stored).
  const after = alertsReducer(during, {
    kind: 'loaded',
    alerts: [alert(2), alert(1, { read: true })],
    total: 2,
    unread: 1,
    filter: {},
    onFirstPage: true,
  });
  assert.deepEqual(
    after.alerts.map((a) => a.id),
    [3, 2, 1],
  );
  assert.equal(after.total, 3);
  assert.equal(after.unread, 2);
  // A load that already has it changes nothing twice; a later page or another filter does not keep it.
  const again = alertsReducer(after, {
    kind: 'loaded',
    alerts: [alert(3), alert(2), alert(1, { read: true })],
    total: 3,
    unread: 2,
    filter: {},
    onFirstPage: true,
  });
  assert.deepEqual(
    again.alerts.map((a) => a.id),
    [3, 2, 1],
  );
  assert.equal(again.total, 3);
  const page2 = alertsReducer(during, {
    kind: 'loaded',
    alerts: [alert(1, { read: true })],
    total: 3,
    unread: 1,
    filter: {},
    onFirstPage: false,
  });
  assert.deepEqual(
    page2.alerts.map((a) => a.id),
    [1],
  );
  const critical = alertsReducer(during, {
    kind: 'loaded',
    alerts: [],
    total: 0,
    unread: 0,
    filter: { severity: 'critical' },
    onFirstPage: true,
  });
  assert.deepEqual(critical.alerts, []);
});
