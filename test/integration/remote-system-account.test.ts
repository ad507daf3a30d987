// Multi-user machines (issue 25 item 3; spec document 2, users.system_account): with the agent
// installed with the right to switch (root), a session of a user whose system_account is set runs as
// that OS account, inside the sandbox; its directory and home are the account's. Needs root (the test
// agent account of the isolation tests); skipped with the reason otherwise.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  type AgentProcess,
  buildRemoteCast,
  cliPid,
  type RemoteCast,
  startAssignedAgent,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';
import { ensureTestAgent, TEST_AGENT } from './autonomous/isolation-support.ts';

const account = ensureTestAgent();
const skip = typeof account === 'string' ? account : false;
if (skip) console.log(`# system_account tests skipped: ${skip}`);

let app: TestApp;
let cast: RemoteCast;
let agent: AgentProcess;

before(async () => {
  if (skip) return;
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
});
after(async () => {
  await agent?.stop();
  await app?.close();
});

const uidOf = (pid: number) =>
  Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? -1);

test('a session of a user with a system_account runs as that account, in the sandbox', { skip }, async () => {
  const { uid } = account as { uid: number; gid: number };
  const set = await api(app.url, 'PUT', `/api/admin/users/${cast.userA.id}`, {
    auth: cast.admin.session,
    body: { linux_account: TEST_AGENT },
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const projectDir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-sysacct-project-')));
  chmodSync(projectDir, 0o777);
  let machineId: string;
  ({ agent, machineId } = await startAssignedAgent(app.url, cast));
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const pid = await cliPid(app.url, cast.userA.session, created.body.session_id);
  assert.equal(uidOf(pid), uid, 'the session runs as the user system account');
  // Its private directory (with its home) is the account's; the agent's config stays root's 0600.
  const sessions = path.join(agent.dir, 'sessions');
  const mine = readdirSync(sessions).map((d) => path.join(sessions, d));
  assert.ok(mine.some((d) => statSync(d).uid === uid && statSync(path.join(d, 'home')).uid === uid));
  assert.equal(statSync(agent.configPath).mode & 0o077, 0);
  // Users without one run as the agent's own account (in the sandbox).
  const other = await api(app.url, 'PUT', `/api/admin/users/${cast.userA.id}`, {
    auth: cast.admin.session,
    body: { linux_account: 'root' },
  });
  assert.equal(other.status, 200);
  const refused = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir },
  });
  // Created on the server; the agent refuses to start it as root.
  assert.equal(refused.status, 201);
  await waitUntil('start refused', async () => {
    const out = await api(app.url, 'GET', `/api/remote/sessions/${refused.body.session_id}`, {
      auth: cast.userA.session,
    });
    return JSON.stringify(out.body).includes('is root');
  });
});
