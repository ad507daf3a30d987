// Remote-workspace test helpers: a cast of users around one machine, machines registered over the real
// API, a scripted "agent" speaking PROTOCOL.md over HTTP (for authority and queue tests), and the real
// agent program as a subprocess driving the fake CLI (for end-to-end tests).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { remoteSessionsRepository } from '../../db/repositories/remote-sessions.ts';
import { createTenant, createUser, PASSWORD } from './actors.ts';
import { ADMIN, type TestApp } from './harness.ts';
import { nodeEntry } from './node-entry.ts';
import { api, login, type Session } from './session.ts';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const FAKE_CLI = path.join(REPO, 'test/fixtures/fake-cli.mjs');

export interface Person {
  id: number;
  session: Session;
}

export interface RemoteCast {
  admin: Person;
  tenantId: number;
  machineAdmin: Person;
  userA: Person;
  userB: Person;
  outsider: Person;
}

export async function person(
  app: Pick<TestApp, 'url'>,
  admin: Session,
  role: string,
  tenantId: number | null,
): Promise<Person> {
  const u = await createUser(app, admin, { role, tenant_id: tenantId });
  return { id: u.id, session: await login(app.url, u.username, PASSWORD) };
}

/** A tenant, a system admin, and users to become machine admin, assigned users and an outsider. */
export async function buildRemoteCast(app: Pick<TestApp, 'url'>): Promise<RemoteCast> {
  const adminSession = await login(app.url, ADMIN.username, ADMIN.password);
  const tenantId = await createTenant(app, adminSession);
  const [machineAdmin, userA, userB, outsider] = await Promise.all(
    ['user', 'user', 'user', 'user'].map((role) => person(app, adminSession, role, tenantId)),
  );
  return {
    admin: { id: adminSession.user.id, session: adminSession },
    tenantId,
    machineAdmin: machineAdmin!,
    userA: userA!,
    userB: userB!,
    outsider: outsider!,
  };
}

export async function registrationToken(url: string, admin: Session, tenantId: number): Promise<string> {
  const r = await api(url, 'POST', '/api/remote/machines/register', {
    auth: admin,
    body: { tenant_id: tenantId },
  });
  if (r.status !== 201) throw new Error(`registration token: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.registration_token;
}

export interface FakeMachine {
  machineId: string;
  agentToken: string;
  headers: Record<string, string>;
}

export function registerBody(token: string, machineId: string = randomUUID()) {
  return {
    registration_token: token,
    machine_id: machineId,
    machine_name: `test-${machineId.slice(0, 8)}`,
    hostname: 'test-host',
    os_type: 'Linux',
    os_version: '6.1',
    capabilities: { cli_tools: ['cli_alpha'], node: process.version },
    agent_version: '0.1.0-test',
    cli_path: '/usr/bin/fake',
    work_dir: '/tmp',
  };
}

export async function registerFakeMachine(
  url: string,
  admin: Session,
  tenantId: number,
): Promise<FakeMachine> {
  const token = await registrationToken(url, admin, tenantId);
  const r = await api(url, 'POST', '/api/remote/agent/register', { body: registerBody(token) });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
  return {
    machineId: r.body.machine_id,
    agentToken: r.body.agent_token,
    headers: { authorization: `Bearer ${r.body.agent_token}`, 'x-machine-id': r.body.machine_id },
  };
}

/** A session row bound to the machine, as the workflow's bind step writes it (no worker needed). */
export async function boundSession(
  app: TestApp,
  cast: RemoteCast,
  machine: FakeMachine,
  userId = cast.userA.id,
): Promise<string> {
  const sessionId = randomUUID();
  await remoteSessionsRepository(app.database).insertIfAbsent({
    sessionId,
    tenantId: cast.tenantId,
    toolName: 'cli_alpha',
    userId,
    status: 'active',
    projectPath: '/tmp',
    remoteMachineId: machine.machineId,
  });
  return sessionId;
}

export function agentMessage(
  url: string,
  machine: FakeMachine,
  body: { wait_ms?: number; events?: unknown[] } = {},
  signal?: AbortSignal,
) {
  return fetch(`${url}/api/remote/agent/message`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...machine.headers },
    body: JSON.stringify({
      wait_ms: body.wait_ms ?? 0,
      heartbeat: { active_sessions: [], agent_version: '0.1.0-test' },
      events: body.events ?? [],
    }),
    signal,
  }).then(async (res) => ({ status: res.status, body: (await res.json().catch(() => null)) as any }));
}

export async function assign(
  url: string,
  actor: Session,
  machineId: string,
  userId: number,
  permission: 'user' | 'admin',
) {
  return api(url, 'POST', `/api/remote/machines/${machineId}/assign`, {
    auth: actor,
    body: { user_id: userId, permission },
  });
}

/**
 * A scripted agent: long-polls, answers every command `{ok: true}` and records what it received.
 * Keeps the machine online and lets lifecycle updates be acknowledged without a real CLI.
 */
export function scriptedAgent(url: string, machine: FakeMachine) {
  const received: any[] = [];
  const controller = new AbortController();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const r = await agentMessage(url, machine, { wait_ms: 2000 }, controller.signal);
        if (r.status !== 200) {
          await sleep(100);
          continue;
        }
        // The message that carries the responses may itself deliver newly claimed commands.
        let commands = r.body.commands as any[];
        while (commands.length) {
          received.push(...commands);
          const answered = await agentMessage(url, machine, {
            events: commands.map((c) => ({
              type: 'response',
              command_id: c.command_id,
              payload: { ok: true },
            })),
          });
          commands = answered.status === 200 ? (answered.body.commands ?? []) : [];
        }
      } catch {
        if (!stopped) await sleep(100);
      }
    }
  })();
  return {
    received,
    async stop() {
      stopped = true;
      controller.abort();
      await loop;
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitUntil<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  // A bound, not a timing: it only decides how long a failing wait takes to fail. CI runs both suites
  // and the fuzz at once on two cores (load 15 to 28); 15 s was once too short there for a real CLI.
  timeoutMs = 60_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface AgentProcess {
  child: ChildProcess;
  dir: string;
  configPath: string;
  logs: string[];
  config(): Record<string, any>;
  stop(): Promise<void>;
}

/** The real agent program (agent/main.ts) as a subprocess, with the fake CLI as its `cli_alpha`. */
export function startAgent(opts: {
  serverUrl: string;
  registrationToken?: string;
  dir?: string;
  extra?: Record<string, unknown>;
}): AgentProcess {
  const dir = opts.dir ?? mkdtempSync(path.join(os.tmpdir(), 'svc-agent-'));
  const configPath = path.join(dir, 'config.json');
  let existing: Record<string, unknown> = {};
  try {
    existing = JSON.parse(readFileSync(configPath, 'utf8'));
  } catch {}
  const config = {
    server_url: opts.serverUrl,
    machine_name: 'e2e-machine',
    cli_tool: 'cli_alpha',
    cli_path: FAKE_CLI,
    work_dir: dir,
    // Projects are temp dirs; the agent's own dir (also under tmpdir) stays excluded (agent/work-roots.ts).
    work_roots: [os.tmpdir()],
    heartbeat_interval: 1,
    reconnect_base_delay: 0.1,
    reconnect_max_delay: 0.5,
    stop_grace_period: 1,
    cli_env: { FAKE_CLI_ECHO: '1' },
    log_level: 'DEBUG',
    ...existing,
    ...(opts.registrationToken ? { registration_token: opts.registrationToken } : {}),
    ...opts.extra,
  };
  writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
  const child = spawn(process.execPath, [...nodeEntry('agent/main.ts'), '--config', configPath], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? os.homedir() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  child.stdout!.on('data', (d: Buffer) => logs.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  return {
    child,
    dir,
    configPath,
    logs,
    config: () => JSON.parse(readFileSync(configPath, 'utf8')),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(8000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** State letter of a process from /proc (R, S, T stopped, Z...), or undefined when it is gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** The session's output events (all of them, through the JSON replay endpoint). */
export async function sessionOutput(url: string, auth: Session, sessionId: string, from = 0): Promise<any[]> {
  const r = await api(url, 'GET', `/api/remote/sessions/${sessionId}/output?from=${from}&limit=1000`, {
    auth,
  });
  if (r.status !== 200) throw new Error(`output: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.events;
}

/** The pid of the CLI the agent started for a session (from its `started` system note). */
export async function cliPid(url: string, auth: Session, sessionId: string, nth = 1): Promise<number> {
  return waitUntil('CLI started note', async () => {
    const events = await sessionOutput(url, auth, sessionId);
    const started = events
      .filter((e) => e.stream === 'system')
      .map((e) => JSON.parse(e.data))
      .filter((d) => d.event === 'started');
    return started[nth - 1]?.pid as number | undefined;
  });
}

/**
 * A real agent registered on `url`, its machine assigned to userA and userB (role `user`) and online,
 * and one session of userA in a fresh project directory whose CLI has started (the terminal relay
 * tests' common start, on one instance or two).
 */
/** The real agent, registered in the cast's tenant, assigned to `user` (default userA) and online. */
export async function startAssignedAgent(
  url: string,
  cast: RemoteCast,
  user: { id: number; session: Session } = cast.userA,
): Promise<{ agent: AgentProcess; machineId: string }> {
  const agent = startAgent({
    serverUrl: url,
    registrationToken: await registrationToken(url, cast.admin.session, cast.tenantId),
  });
  const machineId: string = await waitUntil(
    'registration',
    async () => agent.config().agent_token && agent.config().machine_id,
    20000,
  );
  await assign(url, cast.admin.session, machineId, user.id, 'user');
  await waitUntil(
    'online',
    async () =>
      (await api(url, 'GET', `/api/remote/machines/${machineId}`, { auth: user.session })).body.status ===
      'online',
  );
  return { agent, machineId };
}

export async function startAgentSession(
  url: string,
  cast: RemoteCast,
  projectPrefix: string,
): Promise<{ agent: AgentProcess; machineId: string; sessionId: string; projectDir: string }> {
  const projectDir = realpathSync(mkdtempSync(path.join(os.tmpdir(), projectPrefix)));
  const { agent, machineId } = await startAssignedAgent(url, cast);
  await assign(url, cast.admin.session, machineId, cast.userB.id, 'user');
  const created = await api(url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sessionId: string = created.body.session_id;
  await cliPid(url, cast.userA.session, sessionId);
  return { agent, machineId, sessionId, projectDir };
}
