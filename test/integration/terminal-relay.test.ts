// The live terminal relay end to end (issue 14 item 6; spec document 1, overview item 6): a `ws` client
// as the browser, the real agent program as a subprocess (its pseudo-terminal is util-linux script(1)
// running a real shell), two API instances on one database. Covers: a command typed in the browser runs
// in the session's project directory and its output comes back; resize reaches the shell (`stty size`);
// who may not open a terminal (anonymous, an assigned user who does not own the session, another tenant's
// admin, an unknown session: close 1008 with the status; a cross-site Origin: no upgrade at all); the
// second instance answers 3010 with the owner's address and the client reconnects there (PostgreSQL),
// or serves the terminal itself from its in-process registry (SQLite, and PostgreSQL when the registry's
// table fails); nothing typed reaches the logs; the terminal closes with the session.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { terminalRelayHub } from '../../api/terminal-relay-hub.ts';
import { createTenant, createUser } from '../support/actors.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  type AgentProcess,
  assign,
  buildRemoteCast,
  person,
  processState,
  type RemoteCast,
  registerFakeMachine,
  startAgentSession,
  waitUntil,
} from '../support/remote.ts';
import { hostPidOf } from '../support/sandbox-pids.ts';
import { api, login } from '../support/session.ts';
import { openTerminal, terminalUrl } from '../support/terminal-client.ts';

let testDb: TestDatabase;
let a: TestApp;
let b: TestApp;
let cast: RemoteCast;
let agent: AgentProcess;
let sessionId: string;
let projectDir: string;

before(async () => {
  testDb = await createTestDatabase();
  const taskQueue = `term-${randomBytes(4).toString('hex')}`;
  a = await startTestApp({ worker: true, testDb, env: { TEMPORAL_TASK_QUEUE: taskQueue } });
  b = await startTestApp({ testDb, env: { TEMPORAL_TASK_QUEUE: taskQueue }, migrate: false });
  cast = await buildRemoteCast(a);
  ({ agent, sessionId, projectDir } = await startAgentSession(a.url, cast, 'svc-term-project-'));
});
after(async () => {
  await agent?.stop();
  await a?.close();
  await b?.close();
  await testDb?.drop();
});

test('a command typed in the browser runs in the project directory and echoes back; resize reaches the shell', async () => {
  const t = openTerminal(terminalUrl(a.url, sessionId, { cols: 100, rows: 30 }), {
    token: cast.userA.session.token,
    origin: a.url,
  });
  await t.opened;
  t.type('echo hello-$((40+2)); pwd\r');
  await t.waitFor('hello-42');
  await t.waitFor(projectDir);
  t.type('stty size\r');
  await t.waitFor('30 100');
  const mark = t.text().length;
  t.resize(132, 43);
  await new Promise((r) => setTimeout(r, 300));
  t.type('stty size\r');
  await t.waitFor('43 132', 10_000, mark);
  // The typed text never reaches a log line; the relay's registry holds no terminal bytes.
  t.type('echo TYPED-$((1+1))-MARKER\r');
  await t.waitFor('TYPED-2-MARKER');
  assert.ok(!a.logs.join('').includes('TYPED-'), 'typed text is not logged by the API');
  assert.ok(!agent.logs.join('').includes('TYPED-'), 'typed text is not logged by the agent');
  const audit = await a.database.sql.query<{ action: string; success: unknown }>(
    'SELECT action, success FROM audit_logs WHERE resource_id = ? AND action LIKE ?',
    [sessionId, 'REMOTE_TERMINAL_%'],
  );
  assert.ok(audit.some((r) => r.action === 'REMOTE_TERMINAL_OPEN'));
  t.type('echo SHELL=$$; sleep 600 & echo BG=$!\r');
  await t.waitFor('BG=');
  await new Promise((r) => setTimeout(r, 100));
  // The shell runs in the session's sandbox (its own pid namespace): map its pids to the host's.
  const shellPid = await hostPidOf(Number(/SHELL=(\d+)/.exec(t.text())![1]), projectDir, 'bash');
  const bgPid = await hostPidOf(Number(/BG=(\d+)/.exec(t.text())![1]), projectDir, 'sleep');
  assert.ok(processState(shellPid) && processState(bgPid), 'shell and background job run');
  t.close();
  const closed = await t.closed;
  assert.equal(closed.code, 1000);
  // The shell and its background job end with the terminal (hang-up), like a closed terminal window.
  const gone = (pid: number) => [undefined, 'Z'].includes(processState(pid));
  await waitUntil('shell and background job gone', async () => gone(shellPid) && gone(bgPid));

  // The browser going away closes the shell on the agent too (its exit is logged there).
  await waitUntil('agent closed the terminal', async () => agent.logs.join('').includes('terminal closing'));
  // The close is audited as the relay ends, without holding the close up: wait for its row.
  await waitUntil('the REMOTE_TERMINAL_CLOSE audit row', async () => {
    const audited = await a.database.sql.query<{ action: string }>(
      'SELECT action FROM audit_logs WHERE resource_id = ? AND action = ?',
      [sessionId, 'REMOTE_TERMINAL_CLOSE'],
    );
    return audited.length >= 1;
  });
});

test('keystrokes typed while the shell is printing are neither lost nor reordered', async () => {
  const t = openTerminal(terminalUrl(a.url, sessionId), { token: cast.userA.session.token, origin: a.url });
  await t.opened;
  t.type('for i in $(seq 1 400); do echo line-$i; sleep 0.002; done\r');
  await t.waitFor('line-20');
  // Typed one key per frame while output flows back in the other direction.
  for (const ch of 'echo typed-during-$((7*7))\r') t.type(ch);
  await t.waitFor('line-400', 20_000);
  await t.waitFor('typed-during-49', 10_000);
  t.close();
  await t.closed;
});

test('refusals: anonymous 401, not the owner 404, another tenant 404, unknown session 404, cross-site Origin', async () => {
  const refused = async (token: string | undefined, id = sessionId) => {
    const t = openTerminal(terminalUrl(a.url, id), { token, origin: a.url });
    await t.opened;
    return t.closed;
  };
  assert.deepEqual(await refused(undefined), {
    code: 1008,
    reason: { error: 'Authentication required', status: 401 },
  });
  assert.deepEqual(await refused('not-a-real-session-token-0123456789abcdef'), {
    code: 1008,
    reason: { error: 'Invalid or expired session', status: 401 },
  });
  // Assigned to the machine, but the session is userA's: same answer as a session that does not exist.
  const notOwner = await refused(cast.userB.session.token);
  assert.deepEqual(notOwner, { code: 1008, reason: { error: 'Session not found', status: 404 } });
  const otherTenant = await createTenant(a, cast.admin.session);
  const foreignAdmin = await person(a, cast.admin.session, 'tenant_admin', otherTenant);
  assert.deepEqual(await refused(foreignAdmin.session.token), notOwner);
  assert.deepEqual(await refused(cast.userA.session.token, randomUUID()), notOwner);
  // A user who must change the password first: refused like every protected endpoint.
  const pending = await createUser(a, cast.admin.session, {
    role: 'user',
    tenant_id: cast.tenantId,
    must_change_password: true,
  });
  const pendingSession = await login(a.url, pending.username, pending.password);
  assert.deepEqual(await refused(pendingSession.token), {
    code: 1008,
    reason: { error: 'Password change required', status: 403 },
  });
  // A page on another site cannot use the visitor's cookie: no upgrade at all.
  const hijack = openTerminal(terminalUrl(a.url, sessionId), {
    token: cast.userA.session.token,
    origin: 'https://evil.example',
  });
  await assert.rejects(hijack.opened, (err: any) => err.status === 403);
  // A Bearer header works for non-browser clients (same session rules).
  const bearer = openTerminal(terminalUrl(a.url, sessionId), { headers: cast.userA.session.headers });
  await bearer.opened;
  bearer.type('echo bearer-$((2+2))\r');
  await bearer.waitFor('bearer-4');
  bearer.close();
  await bearer.closed;
});

test('the shell runs in the session sandbox: no agent token, no other session, no network, not root', async () => {
  const t = openTerminal(terminalUrl(a.url, sessionId), { token: cast.userA.session.token, origin: a.url });
  await t.opened;
  const probe = (cmd: string, tag: string) =>
    t.type(`(${cmd}) >/dev/null 2>&1 && echo ${tag}-OPEN || echo ${tag}-$((6*7))-CLOSED\r`);
  probe(`cat ${agent.configPath}`, 'TOKEN');
  await t.waitFor('TOKEN-42-CLOSED');
  // The agent's folder shows at most the mount points of this session's own directory.
  probe(`ls ${agent.dir} | grep -q config`, 'AGENTDIR');
  await t.waitFor('AGENTDIR-42-CLOSED');
  probe(`cat /proc/1/environ | grep -a SVC_`, 'ENVIRON');
  await t.waitFor('ENVIRON-42-CLOSED');
  const apiPort = new URL(a.url).port;
  probe(
    `node -e "require('net').connect(${apiPort},'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))"`,
    'NETWORK',
  );
  await t.waitFor('NETWORK-42-CLOSED');
  t.type('echo UID-$(id -u)-END\r');
  await t.waitFor('-END');
  assert.doesNotMatch(t.text(), /UID-0-END/, 'the shell is not root');
  // (Each probe prints one of its two answers: the CLOSED ones waited for above are the answers.)
  t.close();
  await t.closed;
});

test('settings remote.terminal_access narrows who may open it: admins only, or nobody', async () => {
  a.settings.remote.terminal_access = 'admins';
  try {
    const owner = openTerminal(terminalUrl(a.url, sessionId), {
      token: cast.userA.session.token,
      origin: a.url,
    });
    const refused = await owner.closed;
    assert.equal(refused.code, 1008);
    assert.match(JSON.stringify(refused.reason), /machine administrators/);
    const admin = openTerminal(terminalUrl(a.url, sessionId), {
      token: cast.admin.session.token,
      origin: a.url,
    });
    await admin.opened;
    admin.close();
    await admin.closed;
    a.settings.remote.terminal_access = 'off';
    const none = openTerminal(terminalUrl(a.url, sessionId), {
      token: cast.admin.session.token,
      origin: a.url,
    });
    const off = await none.closed;
    assert.equal(off.code, 1008);
    assert.match(JSON.stringify(off.reason), /turned off/);
  } finally {
    a.settings.remote.terminal_access = 'owner_and_admins';
  }
});

test('a machine admin of the session machine and a system admin may open it too', async () => {
  const machineId = agent.config().machine_id as string;
  await assign(a.url, cast.admin.session, machineId, cast.machineAdmin.id, 'admin');
  for (const who of [cast.machineAdmin, cast.admin]) {
    const t = openTerminal(terminalUrl(a.url, sessionId), { token: who.session.token, origin: a.url });
    await t.opened;
    t.type(`echo peer-${who.id}-$((1+2))\r`);
    await t.waitFor(`peer-${who.id}-3`);
    t.close();
    await t.closed;
  }
});

test('the shell exiting closes the socket with 1000 "exited" and its exit code', async () => {
  const t = openTerminal(terminalUrl(a.url, sessionId), { token: cast.userA.session.token, origin: a.url });
  await t.opened;
  t.type('echo bye-$((2*4)); exit 3\r');
  await t.waitFor('bye-8');
  const closed = await t.closed;
  assert.equal(closed.code, 1000);
  assert.deepEqual(closed.reason, { reason: 'exited', exit_code: 3 });
});

test('the agent channel answers only the machine the session is bound to; oversized frames are refused', async () => {
  const t = openTerminal(terminalUrl(a.url, sessionId), { token: cast.userA.session.token, origin: a.url });
  await t.opened;
  t.type('echo first-$((2+5))\r');
  await t.waitFor('first-7');
  const [row] = await a.database.sql.query<{ details: string }>(
    'SELECT details FROM audit_logs WHERE resource_id = ? AND action = ? ORDER BY id DESC LIMIT 1',
    [sessionId, 'REMOTE_TERMINAL_OPEN'],
  );
  const terminalId = JSON.parse(row!.details).terminal_id as string;
  const channel = `${a.url}/api/remote/agent/terminals/${terminalId}`;
  const poll = (headers: Record<string, string>) =>
    fetch(channel, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ wait_ms: 0, output: [Buffer.from('INJECTED').toString('base64')] }),
    }).then((r) => r.status);
  // Another machine of the same tenant, with its own valid agent token: the terminal does not exist for it.
  const intruder = await registerFakeMachine(a.url, cast.admin.session, cast.tenantId);
  assert.equal(await poll(intruder.headers), 404);
  assert.equal(await poll({}), 401);
  assert.equal(await poll({ authorization: 'Bearer wrong', 'x-machine-id': agent.config().machine_id }), 401);
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(!t.text().includes('INJECTED'), 'nothing reached the browser');
  t.type('echo still-$((3+5))\r');
  await t.waitFor('still-8');
  // ws refuses a frame over 64 KiB with 1009 (message too big).
  t.type('x'.repeat(70 * 1024));
  assert.equal((await t.closed).code, 1009);
});

test('a browser on the non-owning instance gets 3010 with the owner address and reconnects there', {
  skip: usingPostgres() ? false : 'SQLite: one node, the registry is in-process (next test)',
}, async () => {
  const owner = openTerminal(terminalUrl(a.url, sessionId), {
    token: cast.userA.session.token,
    origin: a.url,
  });
  await owner.opened;
  owner.type('echo owner-$((3+3))\r');
  await owner.waitFor('owner-6');
  assert.equal(terminalRelayHub(a.deps).registry.mode(), 'shared');
  const rows = await a.database.sql.query<{ instance_url: string }>(
    'SELECT instance_url FROM terminal_relays WHERE session_id = ?',
    [sessionId],
  );
  assert.deepEqual(rows, [{ instance_url: a.url }]);

  const other = openTerminal(terminalUrl(b.url, sessionId), {
    token: cast.userA.session.token,
    origin: b.url,
  });
  await other.opened;
  const closed = await other.closed;
  assert.equal(closed.code, 3010);
  assert.deepEqual(closed.reason, { owner: a.url });
  // The client follows the close reason: a second terminal on the owning instance.
  const again = openTerminal(terminalUrl(closed.reason.owner, sessionId), {
    token: cast.userA.session.token,
    origin: closed.reason.owner,
  });
  await again.opened;
  again.type('echo reconnected-$((5+5))\r');
  await again.waitFor('reconnected-10');
  again.close();
  owner.close();
  await Promise.all([again.closed, owner.closed]);
  // The owner's row goes with its last terminal; then B may take the relay.
  await waitUntil(
    'released',
    async () =>
      (await a.database.sql.query('SELECT 1 FROM terminal_relays WHERE session_id = ?', [sessionId]))
        .length === 0,
  );
  const onB = openTerminal(terminalUrl(b.url, sessionId), { token: cast.userA.session.token, origin: b.url });
  await onB.opened;
  onB.type('echo on-b-$((4+4))\r');
  await onB.waitFor('on-b-8');
  onB.close();
  await onB.closed;
});

test('an expired owner is taken over; a live one (even unreachable) keeps the relay until its row expires', {
  skip: usingPostgres() ? false : 'SQLite: the registry is in-process',
}, async () => {
  const dead = 'http://127.0.0.1:9';
  // The relay row of an earlier test's terminal may not be released yet (it is, asynchronously, on close).
  await a.database.sql.query('DELETE FROM terminal_relays WHERE session_id = ?', [sessionId]);
  await a.database.sql.query(
    `INSERT INTO terminal_relays (session_id, instance_url, instance_id, expires_at, updated_at)
       VALUES (?, ?, ?, ?, ?)`,
    [sessionId, dead, 'dead-instance', new Date(Date.now() + 60_000), new Date()],
  );
  const refused = openTerminal(terminalUrl(a.url, sessionId), {
    token: cast.userA.session.token,
    origin: a.url,
  });
  await refused.opened;
  assert.deepEqual(await refused.closed, { code: 3010, reason: { owner: dead } });
  await a.database.sql.query('UPDATE terminal_relays SET expires_at = ? WHERE session_id = ?', [
    new Date(Date.now() - 1000),
    sessionId,
  ]);
  const t = openTerminal(terminalUrl(a.url, sessionId), { token: cast.userA.session.token, origin: a.url });
  await t.opened;
  t.type('echo taken-over-$((6+6))\r');
  await t.waitFor('taken-over-12');
  const rows = await a.database.sql.query<{ instance_url: string }>(
    'SELECT instance_url FROM terminal_relays WHERE session_id = ?',
    [sessionId],
  );
  assert.deepEqual(rows, [{ instance_url: a.url }]);
  t.close();
  await t.closed;
});

test('in-process registry: each instance serves the terminals it holds (SQLite, or a failing shared store)', async () => {
  if (usingPostgres()) {
    // Make the shared store fail: the registry falls back to its in-process map and says so once.
    await a.database.sql.exec('DROP TABLE terminal_relays');
  }
  const onA = openTerminal(terminalUrl(a.url, sessionId), { token: cast.userA.session.token, origin: a.url });
  await onA.opened;
  onA.type('echo fallback-a-$((1+6))\r');
  await onA.waitFor('fallback-a-7');
  const onB = openTerminal(terminalUrl(b.url, sessionId), { token: cast.userA.session.token, origin: b.url });
  await onB.opened;
  onB.type('echo fallback-b-$((1+7))\r');
  await onB.waitFor('fallback-b-8');
  assert.equal(terminalRelayHub(a.deps).registry.mode(), 'in-process');
  assert.equal(terminalRelayHub(b.deps).registry.mode(), 'in-process');
  if (usingPostgres()) {
    const warned = a.logs.filter((l) => l.includes('shared store failed; using in-process registration'));
    assert.equal(warned.length, 1, 'the store failure is logged once');
  }
  onA.close();
  onB.close();
  await Promise.all([onA.closed, onB.closed]);
});

test('stopping the session closes its open terminal', async () => {
  const t = openTerminal(terminalUrl(a.url, sessionId), { token: cast.userA.session.token, origin: a.url });
  await t.opened;
  t.type('echo before-stop-$((9+9))\r');
  await t.waitFor('before-stop-18');
  const stop = await api(a.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, {
    auth: cast.userA.session,
  });
  assert.equal(stop.status, 200, JSON.stringify(stop.body));
  const closed = await Promise.race([
    t.closed,
    new Promise<never>((_r, reject) => setTimeout(() => reject(new Error('terminal still open')), 15_000)),
  ]);
  assert.equal(closed.code, 1000);
  assert.ok(['exited', 'session_ended'].includes(closed.reason.reason), JSON.stringify(closed.reason));
  // A stopped session refuses new terminals.
  const late = openTerminal(terminalUrl(a.url, sessionId), {
    token: cast.userA.session.token,
    origin: a.url,
  });
  await late.opened;
  assert.deepEqual((await late.closed).code, 1008);
});
