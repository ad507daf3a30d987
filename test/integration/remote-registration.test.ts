// Registration cannot take a machine over (issue 8 item 6): a registration naming an existing machine_id
// is refused unless it carries the machine's current agent token or a re-enrolment token a system admin
// issued for that machine id; a machine registered again under the id of a deleted one inherits none of
// its sessions or queued commands; registration tokens expire, are listed (never the secret) and are
// revocable, and an expired or revoked token is refused like a consumed one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type FakeMachine,
  type RemoteCast,
  registerBody as registerBodyFor,
  registerFakeMachine,
  registrationToken,
} from '../support/remote.ts';
import { api, login } from '../support/session.ts';

let app: TestApp;
let cast: RemoteCast;

before(async () => {
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
});
after(async () => {
  await app?.close();
});

const registerBody = (token: string, machineId: string = randomUUID()) =>
  registerBodyFor(token, machineId as ReturnType<typeof randomUUID>);
const register = (body: Record<string, unknown>) =>
  api(app.url, 'POST', '/api/remote/agent/register', { body });
const asMachine = (machineId: string, agentToken: string): FakeMachine => ({
  machineId,
  agentToken,
  headers: { authorization: `Bearer ${agentToken}`, 'x-machine-id': machineId },
});
const TAKEN =
  'machine_id is already registered: re-registering it needs its current agent token, or a re-enrolment ' +
  'token a system administrator creates for this machine_id';

test('a registration token of the same tenant cannot take over an existing machine_id', async () => {
  const victim = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const takeover = await register(registerBody(token, victim.machineId));
  assert.equal(takeover.status, 409);
  assert.equal(takeover.body.error, TAKEN);
  assert.equal((await agentMessage(app.url, victim)).status, 200, "the owner's agent token still works");
  const wrongProof = await register({
    ...registerBody(await registrationToken(app.url, cast.admin.session, cast.tenantId), victim.machineId),
    agent_token: 'not-the-agent-token',
  });
  assert.equal(wrongProof.status, 409);
  assert.equal(
    (await register(registerBody(token))).status,
    401,
    'the refused registration consumed the token',
  );
  const { db, t } = app.database;
  const audits = await db.select().from(t.auditLogs).where(eq(t.auditLogs.action, 'REMOTE_AGENT_REGISTER'));
  assert.ok(
    audits.some(
      (a) => !a.success && a.resourceId === victim.machineId && /machine_id_registered/.test(a.details ?? ''),
    ),
  );
});

test('the agent renews its own registration with its current agent token', async () => {
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const renewed = await register({ ...registerBody(token, m.machineId), agent_token: m.agentToken });
  assert.equal(renewed.status, 201);
  assert.notEqual(renewed.body.agent_token, m.agentToken);
  assert.equal((await agentMessage(app.url, m)).status, 401, 'the old agent token is replaced');
  assert.equal((await agentMessage(app.url, asMachine(m.machineId, renewed.body.agent_token))).status, 200);
});

test('a system admin re-enrols a machine with a token bound to its machine_id', async () => {
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const other = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  const create = (body: Record<string, unknown>, auth = cast.admin.session) =>
    api(app.url, 'POST', '/api/remote/machines/register', { auth, body });
  assert.equal((await create({ tenant_id: cast.tenantId, machine_id: 'no-such-machine' })).status, 400);
  const foreignTenant = await create({ tenant_id: 1, machine_id: m.machineId });
  assert.equal(foreignTenant.status, 400);
  assert.equal(foreignTenant.body.error, 'machine_id belongs to another tenant than tenant_id');

  const misused = await create({ tenant_id: cast.tenantId, machine_id: m.machineId });
  assert.equal(misused.status, 201);
  assert.equal(misused.body.machine_id, m.machineId);
  const wrongMachine = await register(registerBody(misused.body.registration_token, other.machineId));
  assert.equal(wrongMachine.status, 409);
  assert.equal(wrongMachine.body.error, 'This registration token re-enrols another machine_id');

  const reEnrol = await create({ tenant_id: cast.tenantId, machine_id: m.machineId });
  const taken = await register(registerBody(reEnrol.body.registration_token, m.machineId));
  assert.equal(taken.status, 201);
  assert.equal((await agentMessage(app.url, m)).status, 401, 'the previous agent is locked out');
  assert.equal((await agentMessage(app.url, asMachine(m.machineId, taken.body.agent_token))).status, 200);
});

test('a machine registered again under a deleted machine id inherits no session, command or output', async () => {
  const old = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  assert.equal(
    (await assign(app.url, cast.admin.session, old.machineId, cast.userA.id, 'admin')).status,
    200,
  );
  await agentMessage(app.url, old); // online, so a session can be created; its start command stays queued
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: old.machineId, project_path: '/tmp' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sessionId = created.body.session_id as string;
  const { db, t } = app.database;
  // Freeze the session as live and its start command as pending, as if the end had not reached them
  // (e.g. Temporal unavailable during the deletion): the binding alone must keep them from the newcomer.
  const del = await api(app.url, 'DELETE', `/api/remote/machines/${old.machineId}`, {
    auth: cast.admin.session,
  });
  assert.equal(del.status, 200);
  await db.update(t.agentSessions).set({ status: 'active' }).where(eq(t.agentSessions.sessionId, sessionId));
  const [start] = await db
    .select()
    .from(t.remoteRuntimeCommands)
    .where(eq(t.remoteRuntimeCommands.sessionId, sessionId));
  assert.equal(start!.commandType, 'session.start');
  assert.equal(start!.status, 'pending');

  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const again = await register(registerBody(token, old.machineId));
  assert.equal(again.status, 201, 'the id is free again after the deletion');
  const newcomer = asMachine(old.machineId, again.body.agent_token);
  const poll = await agentMessage(app.url, newcomer);
  assert.equal(poll.status, 200);
  assert.deepEqual(poll.body.commands, [], 'the old session.start (with its proxy token) is not delivered');
  // Commands queued now for the old session are not delivered either.
  const chat = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'secret prompt' },
  });
  assert.ok([200, 201, 202].includes(chat.status), JSON.stringify(chat.body));
  assert.deepEqual((await agentMessage(app.url, newcomer)).body.commands, []);
  const forged = await agentMessage(app.url, newcomer, {
    events: [
      { type: 'output', session_id: sessionId, run_id: 'r', seq: 1, stream: 'stdout', data: 'forged' },
    ],
  });
  assert.equal(forged.body.rejected_events, 1, "the newcomer cannot write into the old session's output");
  // An admin of the new machine does not see the old machine's sessions.
  assert.equal(
    (await assign(app.url, cast.admin.session, old.machineId, cast.userB.id, 'admin')).status,
    200,
  );
  const seen = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}`, { auth: cast.userB.session });
  assert.equal(seen.status, 404);
  const listed = await api(app.url, 'GET', '/api/remote/sessions', { auth: cast.userB.session });
  assert.ok(!listed.body.sessions.some((s: any) => s.session_id === sessionId));
  // The new generation works normally.
  const fresh = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userB.session,
    body: { machine_id: old.machineId, project_path: '/tmp' },
  });
  assert.equal(fresh.status, 201);
  const delivered = await agentMessage(app.url, newcomer);
  assert.deepEqual(
    delivered.body.commands.map((c: any) => [c.session_id, c.command_type]),
    [[fresh.body.session_id, 'session.start']],
  );
});

test('registration tokens: listed without secrets, revocable, audited; a revoked token is refused', async () => {
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const list = await api(app.url, 'GET', '/api/remote/machines/registration-tokens', {
    auth: cast.admin.session,
  });
  assert.equal(list.status, 200);
  assert.ok(!JSON.stringify(list.body).includes(token));
  const { db, t } = app.database;
  const hashes = (await db.select().from(t.registrationTokens)).map((r) => r.tokenHash);
  assert.ok(!hashes.some((h) => JSON.stringify(list.body).includes(h)), 'no hash either');
  const mine = list.body.tokens[0];
  assert.deepEqual(Object.keys(mine).sort(), [
    'consumed_at',
    'consumed_by_machine_id',
    'created_at',
    'created_by',
    'expires_at',
    'id',
    'machine_id',
    'revoked_at',
    'status',
    'tenant_id',
  ]);
  assert.equal(mine.status, 'unused');
  assert.equal(mine.tenant_id, cast.tenantId);
  assert.equal(mine.created_by, cast.admin.id);
  assert.equal(Date.parse(mine.expires_at) - Date.parse(mine.created_at), 24 * 3_600_000, 'default 24 h');

  for (const who of [cast.userA.session, cast.machineAdmin.session]) {
    assert.equal(
      (await api(app.url, 'GET', '/api/remote/machines/registration-tokens', { auth: who })).status,
      403,
    );
    assert.equal(
      (await api(app.url, 'DELETE', `/api/remote/machines/registration-tokens/${mine.id}`, { auth: who }))
        .status,
      403,
    );
  }
  const revoke = await api(app.url, 'DELETE', `/api/remote/machines/registration-tokens/${mine.id}`, {
    auth: cast.admin.session,
  });
  assert.equal(revoke.status, 200);
  const refused = await register(registerBody(token));
  assert.equal(refused.status, 401);
  assert.equal(refused.body.error, 'Registration token is invalid, expired, revoked or already used');
  const twice = await api(app.url, 'DELETE', `/api/remote/machines/registration-tokens/${mine.id}`, {
    auth: cast.admin.session,
  });
  assert.equal(twice.status, 409);
  assert.equal(
    (
      await api(app.url, 'DELETE', '/api/remote/machines/registration-tokens/99999999', {
        auth: cast.admin.session,
      })
    ).status,
    404,
  );
  const after = await api(app.url, 'GET', '/api/remote/machines/registration-tokens', {
    auth: cast.admin.session,
  });
  assert.equal(after.body.tokens.find((x: any) => x.id === mine.id).status, 'revoked');
  const audits = await db
    .select()
    .from(t.auditLogs)
    .where(eq(t.auditLogs.action, 'REMOTE_REGISTRATION_TOKEN_REVOKE'));
  assert.ok(audits.some((a) => a.success && a.resourceId === String(mine.id)));
  assert.ok(
    audits.some((a) => !a.success),
    'the refused attempts are audited too',
  );
});

// Last: moves the shared test clock a day forward.
test('a registration token expires after registration_token_ttl_hours (24 h)', async () => {
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  const fresh = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  app.clock.advance(23 * 3_600_000);
  assert.equal((await register(registerBody(fresh))).status, 201, 'valid within 24 h');
  app.clock.advance(1 * 3_600_000 + 1000);
  const expired = await register(registerBody(token, randomUUID()));
  assert.equal(expired.status, 401);
  assert.equal(expired.body.error, 'Registration token is invalid, expired, revoked or already used');
  const admin = await login(app.url, ADMIN.username, ADMIN.password); // the day-old login expired too
  const list = await api(app.url, 'GET', '/api/remote/machines/registration-tokens', { auth: admin });
  assert.ok(list.body.tokens.some((x: any) => x.status === 'expired'));
});
