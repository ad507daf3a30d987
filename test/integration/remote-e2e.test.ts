// End to end with the real agent program and the fake CLI: register with a one-time token, go online,
// assign a user, create a session (a Temporal workflow), chat and see the reply in the output (JSON and
// SSE), pause (the CLI process really is stopped: state T in /proc) and resume, change the model,
// stop, and check the proxy token's life: issued at creation, sealed in the queue, revoked at stop.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { EventSource } from 'eventsource';
import { remoteSessionControl } from '../../api/remote-session-control.ts';
import { openPayload } from '../../domain/remote-command-payload.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import { storageKey } from '../../services/secrets.ts';
import { remoteSessionWorkflowId } from '../../workflows/remote/contract.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  type AgentProcess,
  assign,
  buildRemoteCast,
  cliPid,
  processState,
  type RemoteCast,
  registrationToken,
  sessionOutput,
  startAgent,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let cast: RemoteCast;
let agent: AgentProcess;
let machineId: string;
let sessionId: string;
let projectDir: string;

before(async () => {
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  projectDir = mkdtempSync(path.join(os.tmpdir(), 'svc-project-'));
});
after(async () => {
  await agent?.stop();
  await app?.close();
});

const stdoutTexts = (events: any[]) => events.filter((e) => e.stream === 'stdout').map((e) => e.data);

test('the agent registers with a one-time token and comes online', async () => {
  const token = await registrationToken(app.url, cast.admin.session, cast.tenantId);
  agent = startAgent({ serverUrl: app.url, registrationToken: token });
  machineId = await waitUntil(
    'agent registration',
    async () => agent.config().agent_token && agent.config().machine_id,
    20000,
  );
  assert.equal(agent.config().registration_token, undefined, 'the used token is removed from config.json');
  const m = await waitUntil('machine online', async () => {
    const r = await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.admin.session });
    return r.body?.status === 'online' ? r.body : undefined;
  });
  assert.equal(m.connected, true);
  assert.equal(m.machine_name, 'e2e-machine');
  assert.equal(m.os_type, process.platform);
});

test('session creation answers 400 when not assigned, machine offline, or project_path missing', async () => {
  const notAssigned = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir },
  });
  assert.equal(notAssigned.status, 400);
  assert.equal((await assign(app.url, cast.admin.session, machineId, cast.userA.id, 'user')).status, 200);
  const noPath = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId },
  });
  assert.equal(noPath.status, 400);
  assert.match(noPath.body.error, /project_path/);
  app.clock.advance(200_000);
  try {
    const offline = await api(app.url, 'POST', '/api/remote/sessions', {
      auth: cast.userA.session,
      body: { machine_id: machineId, project_path: projectDir },
    });
    assert.equal(offline.status, 400);
    assert.match(offline.body.error, /offline/);
  } finally {
    app.clock.advance(-200_000);
  }
});

test('create a session, chat, and read the reply in the output', async () => {
  // The agent heartbeats every second: make sure the clock rewind above was seen.
  await waitUntil(
    'online again',
    async () =>
      (await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.userA.session })).body
        .status === 'online',
  );
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir, cli_tool: 'cli_alpha', title: 'e2e' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  sessionId = created.body.session_id;
  assert.equal(created.body.status, 'active');
  assert.equal(created.body.session.machine_id, machineId);
  assert.equal(created.body.session.project_path, projectDir);

  // The start command's proxy token is stored sealed, never in clear.
  const { db, t } = app.database;
  const [start] = await db
    .select()
    .from(t.remoteRuntimeCommands)
    .where(eq(t.remoteRuntimeCommands.commandId, `${sessionId}:start`));
  assert.ok(start, 'session.start queued');
  assert.ok(
    !start.payload!.includes('svcpt_') && !/"proxy_token"/.test(start.payload!),
    'proxy token sealed at rest',
  );
  assert.match(start.payload!, /proxy_token_sealed/);
  const tokens = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.equal(tokens.length, 1);
  assert.equal(tokens[0]!.provider, 'openai', 'cli_alpha talks to the OpenAI-compatible provider');

  await cliPid(app.url, cast.userA.session, sessionId);
  const chat = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'hello from the browser' },
  });
  assert.equal(chat.status, 200);
  assert.ok(chat.body.command_id);
  await waitUntil('reply in output', async () =>
    stdoutTexts(await sessionOutput(app.url, cast.userA.session, sessionId)).some((d) =>
      d.includes('echo: hello from the browser'),
    ),
  );

  const detail = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}`, { auth: cast.userA.session });
  assert.equal(detail.status, 200);
  const s = detail.body.session;
  for (const f of [
    'session_id',
    'status',
    'machine_id',
    'project_path',
    'model',
    'total_tokens',
    'message_count',
    'output',
  ])
    assert.ok(f in s, `session field ${f}`);
  assert.equal(s.message_count, 1);
  assert.ok(
    s.output.every(
      (o: any) =>
        typeof o.data === 'string' && typeof o.stream === 'string' && typeof o.timestamp === 'string',
    ),
  );
  const indexes = s.output.map((o: any) => o.event_index);
  assert.deepEqual(
    indexes,
    indexes.map((_: number, i: number) => i),
    'gap-free event indexes from 0',
  );
  const [cmd] = await db
    .select()
    .from(t.remoteRuntimeCommands)
    .where(eq(t.remoteRuntimeCommands.commandId, chat.body.command_id));
  assert.equal(cmd!.status, 'responded', 'the agent answered the input command');
});

test('SSE: replay from an index, live tail, and resume with Last-Event-ID', async () => {
  const all = await sessionOutput(app.url, cast.userA.session, sessionId);
  const from = Math.max(0, all.length - 2);
  const received: any[] = [];
  const open = (lastEventId?: string) =>
    new EventSource(`${app.url}/api/remote/sessions/${sessionId}/output/stream?from=${from}`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: {
            ...(init?.headers as Record<string, string>),
            ...cast.userA.session.headers,
            ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
          },
        }),
    });
  let es = open();
  es.addEventListener('output', (e) => received.push({ id: e.lastEventId, ...JSON.parse(e.data) }));
  await waitUntil('replay', async () => received.length >= all.length - from);
  assert.equal(received[0].event_index, from, 'replay starts at the requested index');

  await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'live line' },
  });
  await waitUntil('live reply over SSE', async () =>
    received.some((e) => e.data.includes('echo: live line')),
  );
  es.close();

  // Disconnected: more output arrives meanwhile; a new stream with Last-Event-ID gets exactly the rest.
  const lastSeen = received[received.length - 1].event_index;
  await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'while away' },
  });
  await waitUntil('reply stored', async () =>
    stdoutTexts(await sessionOutput(app.url, cast.userA.session, sessionId)).some((d) =>
      d.includes('echo: while away'),
    ),
  );
  const resumed: any[] = [];
  es = open(String(lastSeen));
  es.addEventListener('output', (e) => resumed.push(JSON.parse(e.data)));
  await waitUntil('resumed stream', async () => resumed.some((e) => e.data.includes('echo: while away')));
  es.close();
  assert.equal(resumed[0].event_index, lastSeen + 1, 'resumes right after the last event seen');
  const idx = [...received.map((e) => e.event_index), ...resumed.map((e) => e.event_index)];
  assert.deepEqual(
    idx,
    idx.map((_, i) => from + i),
    'no gap and no repeat across the reconnect',
  );
});

test('pause stops the CLI process (state T), resume continues it', async () => {
  const pid = await cliPid(app.url, cast.userA.session, sessionId);
  assert.notEqual(processState(pid), 'T');
  const paused = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/pause`, {
    auth: cast.userA.session,
  });
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.status, 'paused');
  assert.equal(paused.body.agent_acknowledged, true);
  assert.equal(processState(pid), 'T', 'SIGSTOP reached the CLI');
  const detail = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}`, { auth: cast.userA.session });
  assert.equal(detail.body.session.status, 'paused');
  assert.ok(detail.body.session.paused_at);
  assert.equal(
    (await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/pause`, { auth: cast.userA.session }))
      .status,
    409,
  );

  const resumed = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/resume`, {
    auth: cast.userA.session,
  });
  assert.equal(resumed.status, 200);
  assert.equal(resumed.body.status, 'active');
  assert.notEqual(processState(pid), 'T', 'SIGCONT reached the CLI');
  await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'after resume' },
  });
  await waitUntil('reply after resume', async () =>
    stdoutTexts(await sessionOutput(app.url, cast.userA.session, sessionId)).some((d) =>
      d.includes('echo: after resume'),
    ),
  );
});

test('model update restarts the CLI with the new model; abort and permission reach the agent', async () => {
  const model = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/model`, {
    auth: cast.userA.session,
    body: { model: 'fake-model-2' },
  });
  assert.equal(model.status, 200, JSON.stringify(model.body));
  assert.equal(model.body.model, 'fake-model-2');
  await cliPid(app.url, cast.userA.session, sessionId, 2);
  await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'which model' },
  });
  await waitUntil('reply from the restarted CLI', async () =>
    stdoutTexts(await sessionOutput(app.url, cast.userA.session, sessionId)).some(
      (d) => d.includes('echo: which model') && d.includes('fake-model-2'),
    ),
  );

  const abort = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/abort`, {
    auth: cast.userA.session,
  });
  assert.equal(abort.status, 200);
  // No permission request is pending: the agent says so, and the synchronous call returns its answer.
  const perm = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/permission`, {
    auth: cast.userA.session,
    body: { request_id: 'nope', decision: 'allow' },
  });
  assert.equal(perm.status, 200);
  assert.equal(perm.body.agent_acknowledged, true);
  assert.equal(perm.body.agent_response.ok, false);
  assert.equal(
    (
      await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/permission`, {
        auth: cast.userA.session,
        body: { request_id: 'x', decision: 'maybe' },
      })
    ).status,
    400,
  );
});

test('token rotation: the old token is revoked and the new one reaches the running CLI', async () => {
  const { db, t } = app.database;
  const before = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.equal(before.length, 1);
  const rotated = await remoteSessionControl(app.deps.temporal).rotateToken(sessionId);
  assert.equal(rotated.status, 'active');
  const after = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.equal(after.length, 2);
  assert.equal(after.find((tk) => tk.jti === before[0]!.jti)!.revokedReason, 'rotated');
  const fresh = after.find((tk) => tk.jti !== before[0]!.jti)!;
  assert.equal(fresh.revokedAt, null);
  // The sealed rotate command opens to a token the proxy accepts; the agent restarts its CLI with it.
  const [cmd] = await db
    .select()
    .from(t.remoteRuntimeCommands)
    .where(eq(t.remoteRuntimeCommands.commandType, 'session.rotate_token'));
  const token = openPayload(cmd!.payload, storageKey(app.settings)).proxy_token as string;
  const verified = await proxyTokenService({
    database: app.database,
    settings: app.settings,
    now: app.deps.now,
  }).verify(token);
  assert.ok(verified.ok && verified.claims.jti === fresh.jti);
  await cliPid(app.url, cast.userA.session, sessionId, 3);
  // Neither token is in the workflow's history (inputs, activity results, update results).
  const history = await (await app.deps.temporal.client()).workflow
    .getHandle(remoteSessionWorkflowId(sessionId))
    .fetchHistory();
  const historyText = JSON.stringify(history, (_k, v) =>
    v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v,
  );
  assert.ok(historyText.includes(sessionId), 'the history was decoded');
  assert.ok(
    !historyText.includes(token) && !historyText.includes('svcpt_'),
    'no proxy token in workflow history',
  );
  await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
    auth: cast.userA.session,
    body: { content: 'after rotation' },
  });
  await waitUntil('reply after rotation', async () =>
    stdoutTexts(await sessionOutput(app.url, cast.userA.session, sessionId)).some((d) =>
      d.includes('echo: after rotation'),
    ),
  );
});

test('stop ends the CLI and revokes the proxy token; a stopped session takes no more commands', async () => {
  const pids = [await cliPid(app.url, cast.userA.session, sessionId, 3)];
  const stopped = await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/stop`, {
    auth: cast.userA.session,
  });
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  assert.equal(stopped.body.status, 'stopped');
  await waitUntil(
    'CLI gone',
    async () => pids.every((p) => processState(p) === undefined || processState(p) === 'Z'),
    10000,
  );
  const { db, t } = app.database;
  const tokens = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, sessionId));
  assert.equal(tokens.length, 2, 'one token from creation, one from the rotation');
  assert.ok(
    tokens.every((tk) => tk.revokedAt),
    'every token of the session is revoked',
  );
  assert.ok(tokens.some((tk) => tk.revokedReason === 'stopped'));
  assert.equal(
    (
      await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
        auth: cast.userA.session,
        body: { content: 'too late' },
      })
    ).status,
    409,
  );
  assert.equal(
    (await api(app.url, 'POST', `/api/remote/sessions/${sessionId}/resume`, { auth: cast.userA.session }))
      .status,
    409,
  );
  const detail = await api(app.url, 'GET', `/api/remote/sessions/${sessionId}`, { auth: cast.userA.session });
  assert.equal(detail.body.session.status, 'stopped');
  assert.ok(detail.body.session.cli_started_at, 'the CLI ran: its start is recorded');
  // The agent's exit report arrives after the stop and does not change the status.
  await waitUntil('exit reported', async () =>
    (await sessionOutput(app.url, cast.userA.session, sessionId)).some(
      (e) => e.stream === 'request_state' && e.data.includes('exited'),
    ),
  );
  assert.equal(
    (await api(app.url, 'GET', `/api/remote/sessions/${sessionId}`, { auth: cast.userA.session })).body
      .session.status,
    'stopped',
  );

  // The stream of a finished session: replay, then `end`; reconnecting after the last event -> 204.
  const res = await fetch(`${app.url}/api/remote/sessions/${sessionId}/output/stream`, {
    headers: cast.userA.session.headers,
  });
  assert.equal(res.status, 200);
  const body = await res.text();
  assert.match(body, /event: end\ndata: \{"session_id":"[^"]+","status":"stopped"/);
  const last = Math.max(...[...body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1])));
  const done = await fetch(`${app.url}/api/remote/sessions/${sessionId}/output/stream`, {
    headers: { ...cast.userA.session.headers, 'last-event-id': String(last) },
  });
  assert.equal(done.status, 204);
});

test('a CLI that exits by itself completes the session and revokes its token', async () => {
  // A project path that does not exist on the machine: the agent refuses to start and reports exited.
  const created = await api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: '/does/not/exist' },
  });
  assert.equal(created.status, 201);
  const id = created.body.session_id;
  await waitUntil(
    'session completed',
    async () =>
      (await api(app.url, 'GET', `/api/remote/sessions/${id}`, { auth: cast.userA.session })).body.session
        .status === 'completed',
  );
  const out = await sessionOutput(app.url, cast.userA.session, id);
  assert.ok(out.some((e) => e.stream === 'system' && e.data.includes('not a directory')));
  // Its CLI never ran: no start recorded, so the web app does not call it "completed" (issue 28 item 5).
  const ended = await api(app.url, 'GET', `/api/remote/sessions/${id}`, { auth: cast.userA.session });
  assert.equal(ended.body.session.cli_started_at, null);
  const { db, t } = app.database;
  const tokens = await db.select().from(t.proxyTokens).where(eq(t.proxyTokens.sessionId, id));
  assert.ok(tokens.every((tk) => tk.revokedReason === 'completed'));
});

test('no secret in logs; session operations were audited', async () => {
  const { db, t } = app.database;
  const config = agent.config();
  const joined = app.logs.join('\n');
  assert.ok(!joined.includes(config.agent_token), 'agent token never logged by the server');
  assert.ok(!agent.logs.join('\n').includes(config.agent_token), 'agent token never logged by the agent');
  assert.ok(!/svcpt_[A-Za-z0-9_-]{20,}/.test(joined), 'no proxy token in server logs');
  const actions = new Set((await db.select({ a: t.auditLogs.action }).from(t.auditLogs)).map((r) => r.a));
  for (const a of [
    'REMOTE_SESSION_CREATE',
    'REMOTE_SESSION_CHAT',
    'REMOTE_SESSION_PAUSE',
    'REMOTE_SESSION_RESUME',
    'REMOTE_SESSION_STOP',
    'REMOTE_SESSION_MODEL',
    'REMOTE_SESSION_ABORT',
    'REMOTE_SESSION_PERMISSION',
  ])
    assert.ok(actions.has(a), `audit ${a}`);
});
