// Machines over the real API: registration tokens (system admin only, tenant-bound, hashed, single use,
// consumed by a failed registration), registration storing every spec field, agent authentication,
// online/offline from heartbeats (180 s, moved with the test clock), unregistering, the reserved
// endpoints, and the installer's files.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { heartbeatsBehind } from '../../services/remote-heartbeats.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type RemoteCast,
  registerBody,
  registerFakeMachine,
  registrationToken,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let cast: RemoteCast;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

before(async () => {
  app = await startTestApp();
  cast = await buildRemoteCast(app);
});
after(async () => {
  await app?.close();
});

test('registration token: system admin only, tenant must exist, only its hash is stored', async () => {
  const denied = await api(app.url, 'POST', '/api/remote/machines/register', {
    auth: cast.userA.session,
    body: { tenant_id: cast.tenantId },
  });
  assert.equal(denied.status, 403);
  const noTenant = await api(app.url, 'POST', '/api/remote/machines/register', {
    auth: cast.admin.session,
    body: { tenant_id: 999_999 },
  });
  assert.equal(noTenant.status, 400);
  const bad = await api(app.url, 'POST', '/api/remote/machines/register', {
    auth: cast.admin.session,
    body: {},
  });
  assert.equal(bad.status, 400);
  const anon = await api(app.url, 'POST', '/api/remote/machines/register', {
    body: { tenant_id: cast.tenantId },
  });
  assert.equal(anon.status, 401);

  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  assert.ok(Buffer.from(token, 'base64url').length === 32, '256-bit token');
  const { db, t } = app.database;
  const rows = await db.select().from(t.registrationTokens);
  assert.ok(rows.some((r) => r.tokenHash === sha256(token) && r.tenantId === cast.tenantId));
  assert.ok(!JSON.stringify(rows).includes(token), 'the token itself is not stored');
});

test('a registration token is single use, and a failed registration consumes it', async () => {
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const first = await api(app.url, 'POST', '/api/remote/agent/register', { body: registerBody(token) });
  assert.equal(first.status, 201);
  const again = await api(app.url, 'POST', '/api/remote/agent/register', { body: registerBody(token) });
  assert.equal(again.status, 401);

  const token2 = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const broken = await api(app.url, 'POST', '/api/remote/agent/register', {
    body: { ...registerBody(token2), machine_id: 'bad id with spaces' },
  });
  assert.equal(broken.status, 400);
  const retry = await api(app.url, 'POST', '/api/remote/agent/register', { body: registerBody(token2) });
  assert.equal(retry.status, 401, 'the token was consumed by the failed registration');

  const unknown = await api(app.url, 'POST', '/api/remote/agent/register', {
    body: registerBody('not-a-token'),
  });
  assert.equal(unknown.status, 401);
});

test('registration stores every field of the spec table; the agent token only as its hash', async () => {
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const body = registerBody(token);
  const r = await api(app.url, 'POST', '/api/remote/agent/register', { body });
  assert.equal(r.status, 201);
  assert.equal(r.body.machine_id, body.machine_id);
  assert.ok(Buffer.from(r.body.agent_token, 'base64url').length === 32);
  const { db, t } = app.database;
  const [row] = await db
    .select()
    .from(t.remoteMachines)
    .where(eq(t.remoteMachines.machineId, body.machine_id));
  assert.equal(row!.agentTokenHash, sha256(r.body.agent_token));
  assert.ok(!JSON.stringify(row).includes(r.body.agent_token));

  const m = await api(app.url, 'GET', `/api/remote/machines/${body.machine_id}`, {
    auth: cast.admin.session,
  });
  assert.equal(m.status, 200);
  for (const field of [
    'machine_id',
    'machine_name',
    'hostname',
    'os_type',
    'os_version',
    'ip_address',
    'status',
    'connected',
    'capabilities',
    'agent_version',
    'cli_path',
    'work_dir',
    'tenant_id',
    'created_by',
    'created_at',
    'updated_at',
    'last_heartbeat',
  ])
    assert.ok(field in m.body, `machine field ${field}`);
  assert.equal(m.body.machine_name, body.machine_name);
  assert.equal(m.body.os_type, 'linux', 'os_type is lower-case');
  assert.equal(m.body.tenant_id, cast.tenantId);
  assert.equal(m.body.created_by, cast.admin.id);
  assert.deepEqual(m.body.capabilities, body.capabilities);
  assert.equal(m.body.cli_path, '/usr/bin/fake');
  assert.equal(m.body.work_dir, '/tmp');
  assert.equal(m.body.status, 'offline', 'registered but not yet polling');
  assert.equal(m.body.connected, false);
  assert.ok(!('agent_token_hash' in m.body) && !('agentTokenHash' in m.body));
});

test('agent authentication: wrong token, unknown machine, missing header -> 401', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  assert.equal((await agentMessage(app.url, machine)).status, 200);
  assert.equal(
    (
      await agentMessage(app.url, {
        ...machine,
        headers: { ...machine.headers, authorization: 'Bearer wrong' },
      })
    ).status,
    401,
  );
  assert.equal(
    (await agentMessage(app.url, { ...machine, headers: { ...machine.headers, 'x-machine-id': 'nope' } }))
      .status,
    401,
  );
  assert.equal(
    (await agentMessage(app.url, { ...machine, headers: { authorization: machine.headers.authorization! } }))
      .status,
    401,
  );
});

test('online after a poll, offline after 180 s without one (test clock), online again on the next poll', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const status = async () =>
    (await api(app.url, 'GET', `/api/remote/machines/${machine.machineId}`, { auth: cast.admin.session }))
      .body;
  assert.equal((await status()).status, 'offline');
  assert.equal((await agentMessage(app.url, machine)).status, 200);
  const online = await status();
  assert.equal(online.status, 'online');
  assert.equal(online.connected, true);
  assert.ok(online.last_heartbeat);
  app.clock.advance(179_000);
  assert.equal((await status()).status, 'online', 'still online at 179 s');
  const stored = async () =>
    (
      await app.database.db
        .select()
        .from(app.database.t.remoteMachines)
        .where(eq(app.database.t.remoteMachines.machineId, machine.machineId))
    )[0]!.status;
  assert.equal(await stored(), 'online');
  app.clock.advance(2_000);
  const offline = await status();
  assert.equal(offline.status, 'offline', 'offline at 181 s');
  assert.equal(offline.connected, false);
  assert.equal(await stored(), 'offline', 'the stored status is written back once a reader sees it');
  const available = await api(app.url, 'GET', '/api/remote/machines/available', { auth: cast.admin.session });
  assert.ok(!available.body.machines.some((m: any) => m.machine_id === machine.machineId));
  assert.equal((await agentMessage(app.url, machine)).status, 200);
  assert.equal((await status()).status, 'online');
  assert.equal(await stored(), 'online');
});

test('listings: admin sees all, users their assigned machines with current_user_permission; detail 404 for others', async () => {
  const m1 = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const m2 = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, m1);
  assert.equal(
    (await assign(app.url, cast.admin.session, m1.machineId, cast.machineAdmin.id, 'admin')).status,
    200,
  );
  assert.equal(
    (await assign(app.url, cast.admin.session, m2.machineId, cast.machineAdmin.id, 'user')).status,
    200,
  );

  const all = await api(app.url, 'GET', '/api/remote/machines', { auth: cast.admin.session });
  const ids = all.body.machines.map((m: any) => m.machine_id);
  assert.ok(ids.includes(m1.machineId) && ids.includes(m2.machineId));
  assert.ok(
    all.body.machines.every((m: any) => !('current_user_permission' in m)),
    'system admins get no current_user_permission',
  );

  const mine = await api(app.url, 'GET', '/api/remote/machines', { auth: cast.machineAdmin.session });
  const byId = new Map(mine.body.machines.map((m: any) => [m.machine_id, m]));
  assert.equal((byId.get(m1.machineId) as any).current_user_permission, 'admin');
  assert.equal((byId.get(m2.machineId) as any).current_user_permission, 'user');
  const available = await api(app.url, 'GET', '/api/remote/machines/available', {
    auth: cast.machineAdmin.session,
  });
  assert.deepEqual(
    available.body.machines.map((m: any) => m.machine_id),
    [m1.machineId],
    'only online assigned machines are available',
  );

  const outsiderList = await api(app.url, 'GET', '/api/remote/machines', { auth: cast.outsider.session });
  assert.ok(!outsiderList.body.machines.some((m: any) => m.machine_id === m1.machineId));
  assert.equal(
    (await api(app.url, 'GET', `/api/remote/machines/${m1.machineId}`, { auth: cast.outsider.session }))
      .status,
    404,
  );
  assert.equal(
    (await api(app.url, 'GET', `/api/remote/machines/${m1.machineId}`, { auth: cast.machineAdmin.session }))
      .status,
    200,
  );
  assert.equal(
    (await api(app.url, 'GET', '/api/remote/machines/does-not-exist', { auth: cast.admin.session })).status,
    404,
  );
});

test('reserved endpoints: agent WebSocket 501, browse 501', async () => {
  const ws = await fetch(`${app.url}/api/remote/agent/ws`);
  assert.equal(ws.status, 501);
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const browse = await api(app.url, 'GET', `/api/remote/machines/${m.machineId}/browse`, {
    auth: cast.admin.session,
  });
  assert.equal(browse.status, 501);
  assert.match(browse.body.error, /reserved/i);
});

test('unregistering removes the machine, its assignments, and the agent token stops working', async () => {
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await assign(app.url, cast.admin.session, m.machineId, cast.userA.id, 'user');
  const del = await api(app.url, 'DELETE', `/api/remote/machines/${m.machineId}`, {
    auth: cast.admin.session,
  });
  assert.equal(del.status, 200);
  assert.equal((await agentMessage(app.url, m)).status, 401);
  assert.equal(
    (await api(app.url, 'GET', `/api/remote/machines/${m.machineId}`, { auth: cast.admin.session })).status,
    404,
  );
  const { db, t } = app.database;
  assert.equal(
    (await db.select().from(t.machineAssignments).where(eq(t.machineAssignments.machineId, m.machineId)))
      .length,
    0,
  );
  assert.equal(
    (await api(app.url, 'DELETE', `/api/remote/machines/${m.machineId}`, { auth: cast.admin.session }))
      .status,
    404,
  );
});

test('every remote operation above left audit records', async () => {
  const { db, t } = app.database;
  const actions = new Set((await db.select({ a: t.auditLogs.action }).from(t.auditLogs)).map((r) => r.a));
  for (const a of [
    'REMOTE_REGISTRATION_TOKEN_CREATE',
    'REMOTE_AGENT_REGISTER',
    'REMOTE_MACHINE_ASSIGN',
    'REMOTE_MACHINE_DELETE',
  ])
    assert.ok(actions.has(a), `audit ${a}`);
  const failed = await db.select().from(t.auditLogs).where(eq(t.auditLogs.success, false));
  assert.ok(
    failed.some((r) => r.action === 'REMOTE_AGENT_REGISTER'),
    'refused registrations are audited',
  );
  assert.ok(
    failed.some((r) => r.action === 'REMOTE_REGISTRATION_TOKEN_CREATE'),
    'refused token generation is audited',
  );
});

test('installer files: listed, served, no path traversal; install scripts carry the server URL', async () => {
  const list = await api(app.url, 'GET', '/api/remote/agent/files');
  assert.equal(list.status, 200);
  assert.ok(list.body.files.includes('main.js'));
  const main = await fetch(`${app.url}/api/remote/agent/files/main.js`);
  assert.equal(main.status, 200);
  assert.match(await main.text(), /import/);
  for (const bad of [
    '../package.json',
    '..%2F..%2Fpackage.json',
    '%2e%2e/%2e%2e/etc/passwd',
    'config.json',
    'node_modules/x.js',
  ])
    assert.equal((await fetch(`${app.url}/api/remote/agent/files/${bad}`)).status, 404, bad);
  const sh = await fetch(`${app.url}/api/remote/agent/install.sh`);
  assert.equal(sh.status, 200);
  assert.ok((await sh.text()).includes(app.url));
  const ps1 = await fetch(`${app.url}/api/remote/agent/install.ps1`);
  assert.equal(ps1.status, 200);
});

test('heartbeats written behind: at once when the row must change, else within the flush, forward only, online only', async () => {
  const machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const { db, t } = app.database;
  const row = async () =>
    (await db.select().from(t.remoteMachines).where(eq(t.remoteMachines.machineId, machine.machineId)))[0]!;
  const writer = heartbeatsBehind(app.database);
  await writer.flush(); // nothing of another test's machines left to write in between
  /** One agent request; the test clock's span around it (the clock also moves with real time). */
  const poll = async () => {
    const from = app.clock.now().getTime();
    assert.equal((await agentMessage(app.url, machine)).status, 200);
    return { from, to: app.clock.now().getTime() };
  };
  const within = (at: Date | null, span: { from: number; to: number }, what: string) =>
    assert.ok(at && at.getTime() >= span.from && at.getTime() <= span.to, `${what}: ${at?.toISOString()}`);

  // Offline: the first poll writes at once.
  const opening = await poll();
  within((await row()).lastHeartbeat, opening, 'the first poll, at once');
  const first = (await row()).lastHeartbeat!;

  // 25 s later (an idle agent's next poll): written behind, with that request's time.
  app.clock.advance(25_000);
  const next = await poll();
  assert.equal((await row()).lastHeartbeat!.getTime(), first.getTime(), 'not yet written');
  await writer.flush();
  within((await row()).lastHeartbeat, next, 'the request’s own time, once flushed');
  const second = (await row()).lastHeartbeat!;

  // Never backwards: an older time kept for it changes nothing.
  writer.record(machine.machineId, new Date(second.getTime() - 10_000));
  await writer.flush();
  assert.equal((await row()).lastHeartbeat!.getTime(), second.getTime());

  // A machine marked offline meanwhile is not made online by a heartbeat written behind ...
  await db
    .update(t.remoteMachines)
    .set({ status: 'offline' })
    .where(eq(t.remoteMachines.machineId, machine.machineId));
  writer.record(machine.machineId, new Date(second.getTime() + 1_000));
  await writer.flush();
  assert.equal((await row()).status, 'offline');
  assert.equal((await row()).lastHeartbeat!.getTime(), second.getTime());
  // ... its next request writes at once.
  app.clock.advance(2_000);
  const back = await poll();
  assert.equal((await row()).status, 'online');
  within((await row()).lastHeartbeat, back, 'back online, at once');

  // A third of the offline threshold (180 s) old: at once, not behind.
  app.clock.advance(60_000);
  const late = await poll();
  within((await row()).lastHeartbeat, late, 'a third of the threshold old: at once');
});
