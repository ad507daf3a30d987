// Alerts REST API (issue 11 item 2; spec document 2 "Alerts", "Governance, alerts, quotas"): the list
// with its filters and defaults (50/0, unread_only false), the unread count, read, read-all, delete,
// notification preferences (defaults true/true/warning, min_severity honoured, unknown fields 400),
// and visibility: own alerts; tenant-wide ones for the admins of that tenant and system admins; a
// user of tenant A never sees tenant B's alerts; a user without tenant sees no tenant-wide alerts;
// an alert that is not visible answers 404. Read state is per user (issue 28 item 5).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { buildCast, type Cast, createUser, PASSWORD } from '../support/actors.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { api, login, type Session } from '../support/session.ts';

let app: TestApp;
let cast: Cast;
let user: Session;
let tenantAdmin: Session;
let otherAdmin: Session;
let platform: Session;
let noTenant: Session;

const raise = (
  over: Partial<Parameters<typeof raiseAlert>[1]> & { userId: number | null; tenantId: number | null },
) =>
  raiseAlert(app.database, {
    alertId: randomUUID(),
    alertType: 'security',
    severity: 'warning',
    title: 'Something happened',
    message: null,
    ...over,
  });
const get = (s: Session, path: string) => api(app.url, 'GET', path, { auth: s });
const ids = (body: any) => (body.alerts as any[]).map((a) => a.alert_id).sort();

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  user = cast.actors.user.session!;
  tenantAdmin = cast.actors.tenant_admin.session!;
  otherAdmin = cast.actors.other_tenant_admin.session!;
  platform = cast.admin;
  // Login refuses a user without tenant: a tenant admin of A logs in, then loses the tenant.
  const lone = await createUser(app, cast.admin, { role: 'tenant_admin', tenant_id: cast.tenantA });
  noTenant = await login(app.url, lone.username, PASSWORD);
  await app.database.sql.query('UPDATE users SET tenant_id = NULL WHERE id = ?', [lone.id]);
});
after(async () => {
  await app?.close();
});

test('authentication is required', async () => {
  for (const [m, p] of [
    ['GET', '/api/alerts'],
    ['GET', '/api/alerts/unread-count'],
    ['GET', '/api/alerts/preferences'],
    ['POST', '/api/alerts/read-all'],
    ['GET', '/api/alerts/stream'],
  ] as const) {
    const r = await api(app.url, m, p);
    assert.equal(r.status, 401, `${m} ${p}`);
  }
});

test('visibility: own alerts, tenant-wide ones for that tenant admin and system admins only', async () => {
  const tag = randomUUID().slice(0, 8);
  const own = `own-${tag}`;
  const wideA = `wideA-${tag}`;
  const wideB = `wideB-${tag}`;
  const global = `global-${tag}`;
  const ownB = `ownB-${tag}`;
  await raise({ alertId: own, userId: user.user.id, tenantId: cast.tenantA, alertType: `t-${tag}` });
  await raise({ alertId: wideA, userId: null, tenantId: cast.tenantA, alertType: `t-${tag}` });
  await raise({ alertId: wideB, userId: null, tenantId: cast.tenantB, alertType: `t-${tag}` });
  await raise({ alertId: global, userId: null, tenantId: null, alertType: `t-${tag}` });
  await raise({ alertId: ownB, userId: otherAdmin.user.id, tenantId: cast.tenantB, alertType: `t-${tag}` });
  const seen = async (s: Session) => ids((await get(s, `/api/alerts?type=t-${tag}`)).body);
  assert.deepEqual(await seen(user), [own]);
  assert.deepEqual(await seen(tenantAdmin), [wideA]);
  assert.deepEqual(await seen(otherAdmin), [ownB, wideB].sort());
  assert.deepEqual(await seen(platform), [global, wideA, wideB].sort());
  assert.deepEqual(await seen(cast.actors.manager.session!), []);
  assert.deepEqual(await seen(noTenant), []);

  // Not visible -> 404, for read and delete alike; the row is untouched.
  for (const s of [tenantAdmin, otherAdmin, noTenant]) {
    assert.equal((await api(app.url, 'POST', `/api/alerts/${own}/read`, { auth: s })).status, 404);
    assert.equal((await api(app.url, 'DELETE', `/api/alerts/${own}`, { auth: s })).status, 404);
  }
  assert.equal((await api(app.url, 'POST', `/api/alerts/${wideB}/read`, { auth: tenantAdmin })).status, 404);
  const [row] = await app.database.sql.query<{ read: unknown }>(
    'SELECT read FROM alerts WHERE alert_id = ?',
    [own],
  );
  assert.ok(!row!.read, 'still unread');
  const tooLong = await api(app.url, 'POST', `/api/alerts/${'x'.repeat(65)}/read`, { auth: user });
  assert.equal(tooLong.status, 400);
  assert.match(tooLong.body.error, /^alert_id/);
  const missing = await api(app.url, 'POST', `/api/alerts/no-such-${tag}/read`, { auth: user });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error, 'Alert not found');
});

test('list defaults, filters, pagination and validation', async () => {
  const fresh = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  const s = await login(app.url, fresh.username, PASSWORD);
  for (let i = 0; i < 55; i++)
    await raise({ userId: fresh.id, tenantId: cast.tenantA, severity: i % 2 ? 'critical' : 'warning' });
  await raise({ userId: fresh.id, tenantId: cast.tenantA, alertType: 'quota', severity: 'critical' });

  const all = await get(s, '/api/alerts');
  assert.equal(all.status, 200);
  assert.equal(all.body.limit, 50);
  assert.equal(all.body.offset, 0);
  assert.equal(all.body.total, 56);
  assert.equal(all.body.alerts.length, 50);
  const first = all.body.alerts[0];
  for (const k of [
    'id',
    'alert_id',
    'alert_type',
    'severity',
    'title',
    'message',
    'user_id',
    'read',
    'created_at',
  ])
    assert.ok(k in first, k);
  assert.equal(first.alert_type, 'quota', 'newest first');
  assert.ok(!Number.isNaN(Date.parse(first.created_at)));

  const page2 = await get(s, '/api/alerts?limit=10&offset=50');
  assert.equal(page2.body.alerts.length, 6);
  assert.equal((await get(s, '/api/alerts?type=quota')).body.total, 1);
  assert.equal((await get(s, '/api/alerts?severity=critical')).body.total, 28);

  for (const [q, field] of [
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['offset=-1', 'offset'],
    ['severity=huge', 'severity'],
    ['unread_only=maybe', 'unread_only'],
  ]) {
    const r = await get(s, `/api/alerts?${q}`);
    assert.equal(r.status, 400, q);
    assert.match(r.body.error, new RegExp(`^${field}`), q);
  }
});

test('unread count, read, unread_only, read-all, delete', async () => {
  const fresh = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantB });
  const s = await login(app.url, fresh.username, PASSWORD);
  const a = `a-${randomUUID()}`;
  const b = `b-${randomUUID()}`;
  await raise({ alertId: a, userId: fresh.id, tenantId: cast.tenantB });
  await raise({ alertId: b, userId: fresh.id, tenantId: cast.tenantB, severity: 'critical' });
  await raise({ userId: fresh.id, tenantId: cast.tenantB, severity: 'critical' });
  assert.deepEqual((await get(s, '/api/alerts/unread-count')).body, { unread_count: 3 });

  const read = await api(app.url, 'POST', `/api/alerts/${a}/read`, { auth: s });
  assert.equal(read.status, 200);
  assert.equal(read.body.success, true);
  assert.deepEqual((await get(s, '/api/alerts/unread-count')).body, { unread_count: 2 });
  const unread = await get(s, '/api/alerts?unread_only=true');
  assert.equal(unread.body.total, 2);
  assert.ok(!ids(unread.body).includes(a));
  assert.equal((await get(s, '/api/alerts?unread_only=false')).body.total, 3);
  assert.equal((await get(s, '/api/alerts')).body.alerts.find((x: any) => x.alert_id === a).read, true);

  const all = await api(app.url, 'POST', '/api/alerts/read-all', { auth: s });
  assert.equal(all.status, 200);
  assert.equal(all.body.marked, 2);
  assert.deepEqual((await get(s, '/api/alerts/unread-count')).body, { unread_count: 0 });

  const del = await api(app.url, 'DELETE', `/api/alerts/${b}`, { auth: s });
  assert.equal(del.status, 200);
  assert.equal((await get(s, '/api/alerts')).body.total, 2);
  assert.equal((await api(app.url, 'DELETE', `/api/alerts/${b}`, { auth: s })).status, 404);
});

test('read-all and unread-count never touch alerts the caller cannot see', async () => {
  const tag = randomUUID();
  await raise({ alertId: `x-${tag}`, userId: null, tenantId: cast.tenantB });
  await api(app.url, 'POST', '/api/alerts/read-all', { auth: tenantAdmin });
  const marks = await app.database.sql.query(
    'SELECT r.user_id FROM alert_reads r JOIN alerts a ON a.id = r.alert_id WHERE a.alert_id = ?',
    [`x-${tag}`],
  );
  assert.deepEqual(marks, [], "tenant B's alert is not marked read by tenant A's admin read-all");
  const unread = await get(otherAdmin, '/api/alerts?unread_only=true');
  assert.ok(ids(unread.body).includes(`x-${tag}`));
});

// Issue 28 item 5: read state is per user. One administrator's "mark all read" (or "mark read") of
// tenant-wide alerts leaves them unread, in the list, unread_only and the count, for the others.
test('read state is per user: one admin marking all read leaves them unread for another', async () => {
  const second = await createUser(app, cast.admin, { role: 'tenant_admin', tenant_id: cast.tenantA });
  const admin2 = await login(app.url, second.username, PASSWORD);
  const tag = randomUUID().slice(0, 8);
  const wide = [`w1-${tag}`, `w2-${tag}`];
  for (const alertId of wide)
    await raise({ alertId, userId: null, tenantId: cast.tenantA, alertType: `r-${tag}` });
  const state = async (s: Session) => {
    const list = (await get(s, `/api/alerts?type=r-${tag}`)).body;
    const unreadOnly = (await get(s, `/api/alerts?type=r-${tag}&unread_only=true`)).body;
    return {
      read: Object.fromEntries((list.alerts as any[]).map((a) => [a.alert_id, a.read])),
      unread: ids(unreadOnly),
      count: (await get(s, '/api/alerts/unread-count')).body.unread_count as number,
    };
  };
  const before2 = await state(admin2);
  const beforePlatform = await state(platform);
  assert.deepEqual(before2.unread, wide.slice().sort());

  const all = await api(app.url, 'POST', '/api/alerts/read-all', { auth: tenantAdmin });
  assert.equal(all.status, 200);
  assert.deepEqual(Object.keys(all.body).sort(), ['marked', 'success']);
  assert.ok(all.body.marked >= 2);
  const mine = await state(tenantAdmin);
  assert.deepEqual(mine.read, { [wide[0]!]: true, [wide[1]!]: true });
  assert.deepEqual(mine.unread, []);

  // The other tenant admin and the system admin still see both unread, counted.
  assert.deepEqual(await state(admin2), before2);
  assert.deepEqual((await state(admin2)).read, { [wide[0]!]: false, [wide[1]!]: false });
  assert.deepEqual(await state(platform), beforePlatform);

  // Marking one read is per user too, and answers the spec's shape.
  const one = await api(app.url, 'POST', `/api/alerts/${wide[0]}/read`, { auth: admin2 });
  assert.deepEqual(one.body, { success: true, alert_id: wide[0] });
  const after2 = await state(admin2);
  assert.deepEqual(after2.unread, [wide[1]]);
  assert.equal(after2.count, before2.count - 1);
  assert.deepEqual((await state(platform)).unread, wide.slice().sort());
  // Marking it again is not an error and changes nothing.
  assert.equal((await api(app.url, 'POST', `/api/alerts/${wide[0]}/read`, { auth: admin2 })).status, 200);
  assert.equal((await state(admin2)).count, after2.count);
});

test('preferences: defaults, partial update, min_severity honoured, validation', async () => {
  const fresh = await createUser(app, cast.admin, { role: 'user', tenant_id: cast.tenantA });
  const s = await login(app.url, fresh.username, PASSWORD);
  const d = await get(s, '/api/alerts/preferences');
  assert.equal(d.status, 200);
  assert.deepEqual(d.body, {
    email_enabled: true,
    push_enabled: true,
    min_severity: 'warning',
    webhook_url: null,
    has_secret: false,
  });

  await raise({ userId: fresh.id, tenantId: cast.tenantA, severity: 'info' });
  await raise({ userId: fresh.id, tenantId: cast.tenantA, severity: 'warning' });
  await raise({ userId: fresh.id, tenantId: cast.tenantA, severity: 'critical' });
  // Default min_severity warning hides the info alert.
  assert.equal((await get(s, '/api/alerts')).body.total, 2);
  assert.equal((await get(s, '/api/alerts/unread-count')).body.unread_count, 2);

  const put = await api(app.url, 'PUT', '/api/alerts/preferences', {
    auth: s,
    body: { min_severity: 'info' },
  });
  assert.equal(put.status, 200);
  assert.deepEqual(put.body, {
    email_enabled: true,
    push_enabled: true,
    min_severity: 'info',
    webhook_url: null,
    has_secret: false,
  });
  assert.equal((await get(s, '/api/alerts')).body.total, 3);

  await api(app.url, 'PUT', '/api/alerts/preferences', {
    auth: s,
    body: { min_severity: 'critical', email_enabled: false },
  });
  assert.deepEqual((await get(s, '/api/alerts/preferences')).body, {
    email_enabled: false,
    push_enabled: true,
    min_severity: 'critical',
    webhook_url: null,
    has_secret: false,
  });
  assert.equal((await get(s, '/api/alerts')).body.total, 1);
  assert.equal((await get(s, '/api/alerts/unread-count')).body.unread_count, 1);

  for (const [body, field] of [
    [{ min_severity: 'loud' }, 'min_severity'],
    [{ email_enabled: 'yes' }, 'email_enabled'],
    [{ push_enabled: 1 }, 'push_enabled'],
  ] as const) {
    const r = await api(app.url, 'PUT', '/api/alerts/preferences', { auth: s, body });
    assert.equal(r.status, 400);
    assert.match(r.body.error, new RegExp(`^${field}`));
  }
  const unknown = await api(app.url, 'PUT', '/api/alerts/preferences', {
    auth: s,
    body: { sms_enabled: true },
  });
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error, /sms_enabled/);
  // Preferences are per user: another user still has the defaults.
  assert.equal((await get(user, '/api/alerts/preferences')).body.min_severity, 'warning');
});
