// Hard-deleting a tenant (issue 8 item 11) removes or revokes everything it owned: machines and their
// assignments (the agents are locked out), stored provider keys, registration tokens, live remote
// sessions (stopped through their workflows, proxy tokens dead). Its users keep their rows with
// tenant_id null, lose their sessions and cannot log in until an administrator gives them a tenant;
// a system administrator of the tenant is unaffected. The default tenant cannot be deleted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { NO_TENANT_REFUSAL } from '../../domain/tenants.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { createTenant, createUser } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  registerBody,
  registerFakeMachine,
  registrationToken,
  scriptedAgent,
} from '../support/remote.ts';
import { api, login, type Session } from '../support/session.ts';
import {
  proxyChat,
  proxyTokenOf,
  sessionState,
  storeMockKey,
  teardownAudits,
} from '../support/session-teardown.ts';

let app: TestApp;
let admin: Session;
let mock: MockProvider;

before(async () => {
  app = await startTestApp({ worker: true });
  mock = await startMockProvider();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
});
after(async () => {
  await mock?.close();
  await app?.close();
});

const rowsOf = async (table: string, column: string, value: unknown) =>
  (await app.database.sql.query(`SELECT * FROM ${table} WHERE ${column} = ?`, [value])).length;

test('a hard delete removes what the tenant owned and ends its users’ access', async () => {
  const tenant = await createTenant(app, admin);
  const user = await createUser(app, admin, { role: 'user', tenant_id: tenant });
  const tenantAdmin = await createUser(app, admin, { role: 'tenant_admin', tenant_id: tenant });
  const sysAdmin = await createUser(app, admin, { role: 'platform_admin', tenant_id: tenant });
  const userSession = await login(app.url, user.username, user.password);
  const tenantAdminSession = await login(app.url, tenantAdmin.username, tenantAdmin.password);
  const sysAdminSession = await login(app.url, sysAdmin.username, sysAdmin.password);

  await storeMockKey(app, admin, tenant, mock);
  const machine = await registerFakeMachine(app.url, admin, tenant);
  await agentMessage(app.url, machine);
  const agent = scriptedAgent(app.url, machine);
  const unusedToken = await registrationToken(app.url, admin, tenant);
  try {
    assert.equal((await assign(app.url, admin, machine.machineId, user.id, 'user')).status, 200);
    const created = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: userSession,
      body: { machine_id: machine.machineId, project_path: '/tmp' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const sid = created.body.session_id;
    const token = await proxyTokenOf(app, sid);
    assert.equal((await proxyChat(app, token)).status, 200, 'the token works before');

    const del = await api(app.url, 'DELETE', `/api/tenants/${tenant}?hard=true`, { auth: admin });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.deepEqual(del.body.removed, {
      sessions_stopped: 1,
      machines: 1,
      machine_assignments: 1,
      api_keys: 1,
      registration_tokens: 2,
      users_without_tenant: 3,
      users_logged_out: 2,
    });

    // Sessions: stopped through the workflow, token dead at the proxy, audited with the reason.
    const s = await sessionState(app, sid);
    assert.equal(s.status, 'stopped');
    assert.ok(s.allRevoked);
    assert.equal((await proxyChat(app, token)).status, 401);
    const [audit] = await teardownAudits(app, sid);
    assert.equal(audit!.details.reason, 'tenant_deleted');
    assert.equal(audit!.details.via, 'workflow');

    // Owned rows are gone; the agent and the unused registration token are locked out.
    assert.equal(await rowsOf('remote_machines', 'tenant_id', tenant), 0);
    assert.equal(await rowsOf('machine_assignments', 'machine_id', machine.machineId), 0);
    assert.equal(await rowsOf('api_key_store', 'tenant_id', tenant), 0);
    assert.equal(await rowsOf('registration_tokens', 'tenant_id', tenant), 0);
    assert.equal((await agentMessage(app.url, machine)).status, 401);
    const reg = await api(app.url, 'POST', '/api/remote/agent/register', { body: registerBody(unusedToken) });
    assert.equal(reg.status, 401);

    // Users stay, without a tenant; their sessions ended and their logins are refused with a reason.
    const { db, t } = app.database;
    for (const u of [user, tenantAdmin, sysAdmin]) {
      const [row] = await db.select().from(t.users).where(eq(t.users.id, u.id));
      assert.equal(row!.tenantId, null, `${u.username} keeps its row with tenant_id null`);
    }
    for (const [who, session] of [
      [user, userSession],
      [tenantAdmin, tenantAdminSession],
    ] as const) {
      assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: session })).status, 401);
      const refused = await api(app.url, 'POST', '/api/auth/login', {
        body: { username: who.username, password: who.password },
      });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error, NO_TENANT_REFUSAL);
    }
    // A system administrator needs no tenant: its session and logins keep working.
    assert.equal((await api(app.url, 'GET', '/api/auth/me', { auth: sysAdminSession })).status, 200);
    await login(app.url, sysAdmin.username, sysAdmin.password);

    // An administrator giving the user a tenant restores access.
    const put = await api(app.url, 'PUT', `/api/admin/users/${user.id}`, {
      auth: admin,
      body: { tenant_id: 1 },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const back = await login(app.url, user.username, user.password);
    assert.equal(back.user.tenant_id, 1);

    const log = await api(app.url, 'GET', '/api/audit/logs?resource_type=tenant', { auth: admin });
    const hard = log.body.logs.find(
      (l: any) => l.target_tenant_id === tenant && l.action === 'TENANT_HARD_DELETE',
    );
    assert.ok(hard, 'the hard delete is audited');
  } finally {
    await agent.stop();
  }
});

test('the default tenant cannot be hard-deleted', async () => {
  const r = await api(app.url, 'DELETE', '/api/tenants/1?hard=true', { auth: admin });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'The default tenant cannot be deleted');
  assert.equal(await rowsOf('tenants', 'id', 1), 1);
});
