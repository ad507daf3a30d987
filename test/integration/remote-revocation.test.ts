// Taking a machine away from a user ends the user's sessions on it (issue 8 item 5): revoking the
// assignment, or unregistering the machine, stops the sessions through their workflows, revokes their
// proxy tokens (the proxy answers 401 at once) and writes one audit record per session naming the
// reason. A session whose workflow is already gone is ended in the database directly. Other users'
// sessions on the machine, and a system administrator's, are left alone.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { remoteSessionWorkflowId } from '../../workflows/remote/contract.ts';
import { type MockProvider, startMockProvider } from '../fixtures/mock-provider.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type FakeMachine,
  type RemoteCast,
  registerFakeMachine,
  scriptedAgent,
} from '../support/remote.ts';
import { api, type Session } from '../support/session.ts';
import {
  proxyChat,
  proxyTokenOf,
  sessionState,
  storeMockKey,
  teardownAudits,
} from '../support/session-teardown.ts';

let app: TestApp;
let cast: RemoteCast;
let mock: MockProvider;
const agents: ReturnType<typeof scriptedAgent>[] = [];

before(async () => {
  app = await startTestApp({ worker: true });
  mock = await startMockProvider();
  cast = await buildRemoteCast(app);
  await storeMockKey(app, cast.admin.session, cast.tenantId, mock);
});
after(async () => {
  for (const a of agents) await a.stop();
  await mock?.close();
  await app?.close();
});

/** A registered machine that is online and answers every command. */
async function onlineMachine(): Promise<FakeMachine> {
  const m = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, m);
  agents.push(scriptedAgent(app.url, m));
  return m;
}

async function sessionOn(who: Session, machineId: string): Promise<string> {
  const r = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: who,
    body: { machine_id: machineId, project_path: '/tmp' },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.session_id;
}

const chat = (who: Session, sid: string) =>
  api(app.url, 'POST', `/api/remote/sessions/${sid}/chat`, { auth: who, body: { content: 'hello' } });
const revoke = (who: Session, machineId: string, uid: number) =>
  api(app.url, 'DELETE', `/api/remote/machines/${machineId}/assign/${uid}`, { auth: who });

test("revoking an assignment stops the user's sessions on the machine and kills their tokens", async () => {
  const m = await onlineMachine();
  assert.equal((await assign(app.url, cast.admin.session, m.machineId, cast.userA.id, 'user')).status, 200);
  assert.equal((await assign(app.url, cast.admin.session, m.machineId, cast.userB.id, 'user')).status, 200);
  assert.equal(
    (await assign(app.url, cast.admin.session, m.machineId, cast.machineAdmin.id, 'admin')).status,
    200,
  );
  const mine = await sessionOn(cast.userA.session, m.machineId);
  const mine2 = await sessionOn(cast.userA.session, m.machineId);
  const theirs = await sessionOn(cast.userB.session, m.machineId);
  const token = await proxyTokenOf(app, mine);
  assert.equal((await proxyChat(app, token)).status, 200, 'the token works before');
  assert.equal((await chat(cast.userA.session, mine)).status, 200);

  // A machine admin may revoke a regular user; the stop happens before the answer.
  const r = await revoke(cast.machineAdmin.session, m.machineId, cast.userA.id);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual([...r.body.sessions_stopped].sort(), [mine, mine2].sort());

  const refused = await proxyChat(app, token);
  assert.equal(refused.status, 401, 'the proxy token is dead at once');
  assert.equal(refused.body.error.type, 'proxy_auth_error');
  const c = await chat(cast.userA.session, mine);
  assert.equal(c.status, 409);
  assert.equal(c.body.error, 'The session is stopped');
  for (const sid of [mine, mine2]) {
    const s = await sessionState(app, sid);
    assert.equal(s.status, 'stopped');
    assert.ok(s.allRevoked, 'every token of the session is revoked');
    const audits = await teardownAudits(app, sid);
    assert.equal(audits.length, 1, 'one audit record per stopped session');
    assert.equal(audits[0]!.details.reason, 'assignment_revoked');
    assert.equal(audits[0]!.details.via, 'workflow');
    assert.equal(audits[0]!.details.user_id, cast.userA.id);
    assert.equal(audits[0]!.userId, cast.machineAdmin.id, 'the actor is the one who revoked');
  }
  // The workflow told the agent to stop the CLI.
  const agent = agents[agents.length - 1]!;
  assert.ok(agent.received.some((cmd) => cmd.command_type === 'session.stop' && cmd.session_id === mine));

  // The machine is gone from the user's listings; the other user's session is untouched.
  const list = await api(app.url, 'GET', '/api/remote/machines', { auth: cast.userA.session });
  assert.ok(!list.body.machines.some((x: any) => x.machine_id === m.machineId));
  assert.equal(
    (await api(app.url, 'GET', `/api/remote/machines/${m.machineId}`, { auth: cast.userA.session })).status,
    404,
  );
  assert.equal((await chat(cast.userB.session, theirs)).status, 200);
  assert.equal((await sessionState(app, theirs)).status, 'active');
  const create = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: m.machineId, project_path: '/tmp' },
  });
  assert.equal(create.status, 400);
});

test('a session whose workflow is already gone is ended in the database directly', async () => {
  const m = await onlineMachine();
  await assign(app.url, cast.admin.session, m.machineId, cast.userB.id, 'user');
  const sid = await sessionOn(cast.userB.session, m.machineId);
  const token = await proxyTokenOf(app, sid);
  const client = await app.deps.temporal.client();
  await client.workflow.getHandle(remoteSessionWorkflowId(sid)).terminate('test: workflow lost');
  assert.equal((await sessionState(app, sid)).status, 'active', 'the row still looks live');
  assert.equal((await proxyChat(app, token)).status, 200);

  const r = await revoke(cast.admin.session, m.machineId, cast.userB.id);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.sessions_stopped, [sid]);
  const s = await sessionState(app, sid);
  assert.equal(s.status, 'stopped');
  assert.ok(s.allRevoked);
  assert.equal((await proxyChat(app, token)).status, 401);
  const [audit] = await teardownAudits(app, sid);
  assert.equal(audit!.details.via, 'direct');
  assert.equal(audit!.details.reason, 'assignment_revoked');
});

test("revoking a system administrator's assignment leaves its sessions running", async () => {
  const m = await onlineMachine();
  await assign(app.url, cast.admin.session, m.machineId, cast.admin.id, 'admin');
  const sid = await sessionOn(cast.admin.session, m.machineId);
  const r = await revoke(cast.admin.session, m.machineId, cast.admin.id);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.sessions_stopped, []);
  assert.equal((await sessionState(app, sid)).status, 'active');
  assert.equal((await chat(cast.admin.session, sid)).status, 200);
});

test('unregistering a machine stops its sessions before answering, tokens revoked, audited', async () => {
  const m = await onlineMachine();
  await assign(app.url, cast.admin.session, m.machineId, cast.userA.id, 'user');
  const sid = await sessionOn(cast.userA.session, m.machineId);
  const token = await proxyTokenOf(app, sid);
  assert.equal((await proxyChat(app, token)).status, 200);

  const del = await api(app.url, 'DELETE', `/api/remote/machines/${m.machineId}`, {
    auth: cast.admin.session,
  });
  assert.equal(del.status, 200);
  // No waiting: the answer came after the stop.
  assert.equal((await proxyChat(app, token)).status, 401);
  const s = await sessionState(app, sid);
  assert.equal(s.status, 'stopped');
  assert.ok(s.allRevoked);
  const [audit] = await teardownAudits(app, sid);
  assert.equal(audit!.details.reason, 'machine_removed');
  assert.equal(audit!.details.via, 'workflow');
  assert.equal(audit!.details.machine_id, m.machineId);
  const c = await chat(cast.userA.session, sid);
  assert.equal(c.status, 409);
  assert.equal(c.body.error, 'The session is stopped');
});
