// The live alert stream (issue 11 item 2; spec document 2 "Alerts", "Events" 1) with real clients
// across TWO API instances on one database: an alert raised through instance A reaches an EventSource
// (`eventsource` package) and a socket.io client (`socket.io-client`, namespace /alerts) connected to
// instance B. Proves the SSE frame (`id:` = alerts.id, `event: alert`, JSON data), the keepalive
// comment, the Last-Event-ID replay (only visible alerts after that id), visibility (own alerts;
// tenant-wide ones for the tenant's admins and system admins; min_severity honoured), and the socket.io
// handshake authentication (auth.token or the session cookie; none -> refused).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { EventSource } from 'eventsource';
import { io, type Socket } from 'socket.io-client';
import type { AlertEvent } from '../../services/alerts/bus.ts';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { buildCast, type Cast } from '../support/actors.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, type Session } from '../support/session.ts';

let testDb: TestDatabase;
let appA: TestApp;
let appB: TestApp;
let cast: Cast;
let user: Session;
let adminA: Session;
let adminB: Session;
const closers: (() => void)[] = [];

before(async () => {
  testDb = await createTestDatabase();
  appA = await startTestApp({ testDb });
  appB = await startTestApp({ testDb, env: { SVC_ALERT_KEEPALIVE_MS: '50' } });
  cast = await buildCast(appA);
  user = cast.actors.user.session!;
  adminA = cast.actors.tenant_admin.session!;
  adminB = cast.actors.other_tenant_admin.session!;
});
after(async () => {
  for (const c of closers) c();
  await appA?.close();
  await appB?.close();
  await testDb?.drop();
});

/** Collects events; `next(pred)` resolves with the first (past or future) one matching. */
class Inbox<T> {
  readonly items: T[] = [];
  private waiters: { pred: (t: T) => boolean; resolve: (t: T) => void }[] = [];
  push(t: T) {
    this.items.push(t);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(t)) return true;
      w.resolve(t);
      return false;
    });
  }
  next(pred: (t: T) => boolean): Promise<T> {
    const found = this.items.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }
}

interface SseMessage {
  lastEventId: string;
  type: string;
  alert: AlertEvent;
}

/** An EventSource on `app` as `s`, open (headers received) before it resolves. */
async function sse(app: TestApp, s: Session, lastEventId?: number) {
  const inbox = new Inbox<SseMessage>();
  const es = new EventSource(`${app.url}/api/alerts/stream`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: {
          ...init?.headers,
          ...s.headers,
          ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }),
        },
      }),
  });
  closers.push(() => es.close());
  es.addEventListener('alert', (e) =>
    inbox.push({ lastEventId: e.lastEventId, type: e.type, alert: JSON.parse(e.data) }),
  );
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`EventSource error: ${e.message}`));
  });
  return { es, inbox };
}

/** A socket.io client of /alerts on `app`, connected and told the stream is live. */
async function socket(app: TestApp, opts: { token?: string; cookie?: string }) {
  const inbox = new Inbox<AlertEvent>();
  const sock: Socket = io(`${app.url}/alerts`, {
    transports: ['websocket'],
    reconnection: false,
    auth: opts.token ? { token: opts.token } : {},
    extraHeaders: opts.cookie ? { cookie: opts.cookie } : {},
  });
  closers.push(() => sock.close());
  sock.on('alert', (a: AlertEvent) => inbox.push(a));
  await new Promise<void>((resolve, reject) => {
    sock.once('ready', () => resolve());
    sock.once('connect_error', reject);
  });
  return { sock, inbox };
}

const raiseOnA = async (
  over: Partial<Parameters<typeof raiseAlert>[1]> & { userId: number | null; tenantId: number | null },
) => {
  const alertId = over.alertId ?? `s-${randomUUID()}`;
  const id = await raiseAlert(appA.database, {
    alertId,
    alertType: 'security',
    severity: 'warning',
    title: `alert ${alertId}`,
    message: 'details',
    ...over,
  });
  assert.ok(id);
  return { id, alertId };
};

test('SSE on instance B receives alerts raised through instance A, only the visible ones', async () => {
  const u = await sse(appB, user);
  const a = await sse(appB, adminA);
  const b = await sse(appB, adminB);
  const p = await sse(appA, cast.admin);

  const hidden = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA, severity: 'info' });
  const own = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA });
  const got = await u.inbox.next((m) => m.alert.alert_id === own.alertId);
  assert.equal(got.type, 'alert');
  assert.equal(got.lastEventId, String(own.id));
  assert.equal(got.alert.id, own.id);
  assert.equal(got.alert.user_id, user.user.id);
  assert.equal(got.alert.tenant_id, cast.tenantA);
  assert.equal(got.alert.severity, 'warning');
  assert.equal(got.alert.message, 'details');
  assert.ok(!Number.isNaN(Date.parse(got.alert.created_at)));
  assert.ok(
    !u.inbox.items.some((m) => m.alert.alert_id === hidden.alertId),
    'an info alert is below the default min_severity (warning)',
  );

  const wideB = await raiseOnA({ userId: null, tenantId: cast.tenantB, severity: 'critical' });
  const wideA = await raiseOnA({ userId: null, tenantId: cast.tenantA, severity: 'critical' });
  await b.inbox.next((m) => m.alert.alert_id === wideB.alertId);
  await a.inbox.next((m) => m.alert.alert_id === wideA.alertId);
  await p.inbox.next((m) => m.alert.alert_id === wideA.alertId);
  await p.inbox.next((m) => m.alert.alert_id === wideB.alertId);
  // A marker for the user arrives after everything above: anything not yet seen is not coming.
  const marker = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA, severity: 'critical' });
  await u.inbox.next((m) => m.alert.alert_id === marker.alertId);
  assert.deepEqual(
    u.inbox.items.map((m) => m.alert.alert_id),
    [own.alertId, marker.alertId],
  );
  assert.ok(
    !a.inbox.items.some((m) => m.alert.tenant_id === cast.tenantB),
    'tenant A admin: no tenant B alert',
  );
  assert.ok(
    !b.inbox.items.some((m) => m.alert.tenant_id === cast.tenantA),
    'tenant B admin: no tenant A alert',
  );
  assert.ok(
    !a.inbox.items.some((m) => m.alert.user_id === user.user.id),
    "admins do not get a user's own alert",
  );
  // Ids increase along the stream.
  const seq = p.inbox.items.map((m) => m.alert.id);
  assert.deepEqual(
    seq,
    [...seq].sort((x, y) => x - y),
  );
});

test('Last-Event-ID replays the visible alerts after that id, then continues live', async () => {
  const start = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA });
  const r1 = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA });
  await raiseOnA({ userId: adminB.user.id, tenantId: cast.tenantB });
  await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA, severity: 'info' });
  const r2 = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA, severity: 'critical' });
  const s = await sse(appB, user, start.id);
  const live = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA });
  await s.inbox.next((m) => m.alert.alert_id === live.alertId);
  assert.deepEqual(
    s.inbox.items.map((m) => m.alert.alert_id),
    [r1.alertId, r2.alertId, live.alertId],
  );
});

test('Last-Event-ID must be a non-negative integer', async () => {
  const r = await api(appB.url, 'GET', '/api/alerts/stream', {
    auth: user,
    headers: { 'last-event-id': 'abc' },
  });
  assert.equal(r.status, 400);
  assert.match(r.body.error, /^Last-Event-ID/);
});

test('the stream sends keepalive comments', async () => {
  const ac = new AbortController();
  const res = await fetch(`${appB.url}/api/alerts/stream`, { headers: user.headers, signal: ac.signal });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes(': keepalive\n\n')) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'stream ended early');
    text += Buffer.from(value).toString();
  }
  ac.abort();
});

test('socket.io /alerts on instance B receives alerts raised through instance A', async () => {
  const byToken = await socket(appB, { token: user.token });
  const byCookie = await socket(appB, { cookie: `session_token=${encodeURIComponent(adminB.token)}` });
  const platform = await socket(appA, { token: cast.admin.token });

  const hidden = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA, severity: 'info' });
  const own = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA });
  const wideB = await raiseOnA({ userId: null, tenantId: cast.tenantB, severity: 'critical' });
  const got = await byToken.inbox.next((a) => a.alert_id === own.alertId);
  assert.equal(got.id, own.id);
  assert.equal(got.title, `alert ${own.alertId}`);
  await byCookie.inbox.next((a) => a.alert_id === wideB.alertId);
  await platform.inbox.next((a) => a.alert_id === wideB.alertId);
  const marker = await raiseOnA({ userId: user.user.id, tenantId: cast.tenantA, severity: 'critical' });
  await byToken.inbox.next((a) => a.alert_id === marker.alertId);
  assert.deepEqual(
    byToken.inbox.items.map((a) => a.alert_id),
    [own.alertId, marker.alertId],
    'no info alert (min_severity), no tenant B alert',
  );
  assert.ok(!byToken.inbox.items.some((a) => a.alert_id === hidden.alertId));
  assert.ok(
    !byCookie.inbox.items.some((a) => a.tenant_id === cast.tenantA),
    'tenant B admin: no tenant A alert',
  );
  assert.ok(!platform.inbox.items.some((a) => a.user_id === user.user.id), "a user's own alert stays theirs");
});

test('socket.io handshake without a valid session is refused', async () => {
  for (const opts of [{}, { token: 'not-a-session-token' }]) {
    const sock = io(`${appB.url}/alerts`, { transports: ['websocket'], reconnection: false, auth: opts });
    closers.push(() => sock.close());
    const err = await new Promise<Error>((resolve) => sock.once('connect_error', resolve));
    assert.match(err.message, /Authentication required|Invalid or expired session/);
  }
});
