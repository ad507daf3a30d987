// End-to-end tests of the agent program against a small protocol-speaking HTTP server written here
// (the outside world for this unit; the real server integration test lives elsewhere). The agent runs
// as a real subprocess (`node --import tsx agent/main.ts`) and drives the fake CLI fixture.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FAKE_CLI = join(REPO, 'test/fixtures/fake-cli.mjs');

type Json = Record<string, any>;

class ProtocolServer {
  readonly agentToken = `agent-${randomUUID()}`;
  readonly registrationToken = `reg-${randomUUID()}`;
  private registrationUsed = false;
  registrations: Json[] = [];
  wsProbes: IncomingHttpHeaders[] = [];
  messages: Array<{ body: Json; at: number; answeredAt?: number; status?: number }> = [];
  /** Every event received, including those in requests answered with an error. */
  received: Json[] = [];
  /** Events of requests answered 200 (acknowledged). */
  acked: Json[] = [];
  proxyCalls: Array<{ authorization?: string; body: Json }> = [];
  /** Answer the next N requests that carry events with 503, after reading them. */
  failEventRequests = 0;
  rejectAuth = false;
  /** Delay of model-proxy answers, to hold a CLI turn in flight. */
  proxyDelayMs = 0;
  /** Called once a response that carried commands has been flushed to the agent. */
  afterDelivered: ((commands: Json[]) => void) | undefined;
  private pending: Json[] = [];
  private held: Array<{ res: ServerResponse; timer: NodeJS.Timeout }> = [];
  private server: http.Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((ok) => this.server!.listen(port, '127.0.0.1', ok));
    this.port = (this.server.address() as { port: number }).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get heldPolls(): number {
    return this.held.length;
  }

  /** Goes away hard: listening socket and every open connection (like a crashed instance). */
  async stop(): Promise<void> {
    for (const h of this.held.splice(0)) {
      clearTimeout(h.timer);
      h.res.destroy();
    }
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  }

  enqueue(commandType: string, sessionId: string | null, payload: Json = {}): string {
    const commandId = `cmd-${randomUUID()}`;
    this.pending.push({
      command_id: commandId,
      command_type: commandType,
      session_id: sessionId,
      payload,
      created_at: new Date().toISOString(),
    });
    const held = this.held.shift();
    if (held) {
      clearTimeout(held.timer);
      this.answerPoll(held.res);
    }
    return commandId;
  }

  outputs(sessionId: string): Json[] {
    return this.acked.filter((e) => e.type === 'output' && e.session_id === sessionId);
  }

  private answerPoll(res: ServerResponse): void {
    const commands = this.pending.splice(0);
    if (commands.length > 0 && this.afterDelivered) {
      const hook = this.afterDelivered;
      res.on('finish', () => hook(commands));
    }
    this.json(res, 200, { commands, server_time: new Date().toISOString() });
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body: Json = raw ? JSON.parse(raw) : {};
    const path = req.url ?? '';
    if (req.method === 'GET' && path === '/api/remote/agent/ws') {
      this.wsProbes.push(req.headers);
      return this.json(res, 501, { error: 'WebSocket transport is not implemented' });
    }
    if (req.method === 'POST' && path === '/api/remote/agent/register') {
      if (body.registration_token !== this.registrationToken || this.registrationUsed) {
        this.registrationUsed = true;
        return this.json(res, 401, { error: 'registration token is invalid or already used' });
      }
      this.registrationUsed = true;
      this.registrations.push(body);
      return this.json(res, 201, { machine_id: body.machine_id, agent_token: this.agentToken });
    }
    if (req.method === 'POST' && path === '/api/remote/agent/message') {
      const record: (typeof this.messages)[number] = { body, at: Date.now() };
      this.messages.push(record);
      res.on('finish', () => {
        record.answeredAt = Date.now();
        record.status = res.statusCode;
      });
      if (this.rejectAuth || req.headers.authorization !== `Bearer ${this.agentToken}`) {
        return this.json(res, 401, { error: 'unknown agent token' });
      }
      const events: Json[] = body.events ?? [];
      this.received.push(...events);
      if (events.length > 0 && this.failEventRequests > 0) {
        this.failEventRequests -= 1;
        return this.json(res, 503, { error: 'try again' });
      }
      this.acked.push(...events);
      if (body.wait_ms > 0 && this.pending.length === 0) {
        const entry = { res, timer: setTimeout(() => this.release(entry), body.wait_ms) };
        this.held.push(entry);
        req.on('close', () => this.dropHeld(entry));
        return;
      }
      return this.answerPoll(res);
    }
    if (req.method === 'POST' && path.startsWith('/api/remote/llm-proxy/')) {
      this.proxyCalls.push({ authorization: req.headers.authorization, body });
      if (this.proxyDelayMs > 0) await new Promise((r) => setTimeout(r, this.proxyDelayMs));
      const last = body.messages?.at(-1)?.content;
      return this.json(res, 200, {
        choices: [{ message: { role: 'assistant', content: `proxy reply to "${last}" via ${body.model}` } }],
        usage: { prompt_tokens: 3, completion_tokens: 5 },
      });
    }
    this.json(res, 404, { error: `no route ${req.method} ${path}` });
  }

  private release(entry: { res: ServerResponse; timer: NodeJS.Timeout }): void {
    this.dropHeld(entry);
    this.answerPoll(entry.res);
  }

  private dropHeld(entry: { res: ServerResponse; timer: NodeJS.Timeout }): void {
    const i = this.held.indexOf(entry);
    if (i !== -1) this.held.splice(i, 1);
    clearTimeout(entry.timer);
  }
}

/** SVC_* variables of the test runner would override the test's config file (env beats file). */
function withoutSvcVars(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('SVC_')));
}

class AgentProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'agent/main.ts'), ...args], {
      cwd: REPO,
      env: { ...withoutSvcVars(process.env), SECRET_FROM_AGENT_ENV: 'must-not-reach-the-cli', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (c) => (this.stdout += c));
    this.child.stderr!.on('data', (c) => (this.stderr += c));
    this.exited = new Promise((ok) => this.child.on('exit', (code, signal) => ok({ code, signal })));
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 8000);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }
}

async function waitFor<T>(
  what: string,
  fn: () => T | undefined | null | false,
  timeoutMs = 8000,
  logs?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}${logs ? `\n--- agent log ---\n${logs().slice(-4000)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

interface Harness {
  server: ProtocolServer;
  agent: AgentProcess;
  configPath: string;
  projectDir: string;
  /** Sends a command and waits for its response event. */
  call(type: string, sessionId: string | null, payload?: Json): Promise<Json>;
  startSession(extra?: Json): Promise<{ sessionId: string; response: Json }>;
  waitOutput(sessionId: string, what: string, match: (e: Json) => boolean, timeoutMs?: number): Promise<Json>;
}

async function harness(
  t: TestContext,
  config: Json = {},
  opts: { register?: boolean } = {},
): Promise<Harness> {
  const server = new ProtocolServer();
  await server.start();
  const dir = mkdtempSync(join(tmpdir(), 'agent-e2e-'));
  // Outside the agent's own directory (config.json), which is never a work root (agent/work-roots.ts).
  const projectDir = mkdtempSync(join(tmpdir(), 'agent-e2e-project-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      server_url: server.url,
      ...(opts.register
        ? { registration_token: server.registrationToken }
        : { agent_token: server.agentToken }),
      machine_name: 'e2e-box',
      cli_path: FAKE_CLI,
      cli_env: { FAKE_CLI_ECHO: '1' },
      heartbeat_interval: 60,
      reconnect_base_delay: 0.05,
      reconnect_max_delay: 0.2,
      stop_grace_period: 1,
      log_level: 'DEBUG',
      work_roots: [projectDir],
      ...config,
    }),
  );
  if (opts.register) {
    const reg = new AgentProcess(['--config', configPath, 'register']);
    const { code } = await reg.exited;
    assert.equal(code, 0, `register failed:\n${reg.stderr}`);
    assert.match(reg.stdout, /registered machine [0-9a-f-]{36}/);
  }
  const agent = new AgentProcess(['--config', configPath]);
  const logs = () => agent.stderr;
  t.after(async () => {
    await agent.stop();
    await server.stop();
  });
  const h: Harness = {
    server,
    agent,
    configPath,
    projectDir,
    async call(type, sessionId, payload = {}) {
      const id = server.enqueue(type, sessionId, payload);
      const event = await waitFor(
        `response to ${type}`,
        () => server.acked.find((e) => e.type === 'response' && e.command_id === id),
        8000,
        logs,
      );
      return event.payload;
    },
    async startSession(extra = {}) {
      const sessionId = `s-${randomUUID()}`;
      const response = await h.call('session.start', sessionId, {
        project_path: projectDir,
        proxy_token: 'proxy-token-1',
        proxy_base_url: `${server.url}/api/remote/llm-proxy`,
        ...extra,
      });
      return { sessionId, response };
    },
    waitOutput(sessionId, what, match, timeoutMs = 8000) {
      return waitFor(what, () => server.outputs(sessionId).find(match), timeoutMs, logs);
    },
  };
  return h;
}

const parse = (e: Json): Json => {
  try {
    return JSON.parse(e.data);
  } catch {
    return {};
  }
};

describe('agent end to end', () => {
  it('registers, falls back from WebSocket 501, runs a session: input, pause, resume, stop', async (t) => {
    const h = await harness(t, {}, { register: true });
    const { server } = h;

    // Registration (done by the `register` subcommand in harness()).
    assert.equal(server.registrations.length, 1);
    const reg = server.registrations[0]!;
    assert.equal(reg.machine_name, 'e2e-box');
    assert.match(reg.machine_id, /^[0-9a-f-]{36}$/);
    assert.equal(reg.os_type, reg.os_type.toLowerCase());
    assert.ok(reg.hostname && reg.os_version && reg.agent_version);
    assert.equal(typeof reg.capabilities, 'object');
    assert.ok(
      reg.capabilities.cli_tools.includes('cli_alpha'),
      'cli_path makes the configured tool available',
    );
    const saved = JSON.parse(readFileSync(h.configPath, 'utf8'));
    assert.equal(saved.agent_token, server.agentToken);
    assert.equal(saved.registration_token, undefined, 'the used registration token is removed');
    assert.equal(saved.machine_id, reg.machine_id);
    assert.equal(statSync(h.configPath).mode & 0o777, 0o600);

    // WebSocket first, then polling.
    await waitFor(
      'a long poll',
      () => server.heldPolls > 0,
      8000,
      () => h.agent.stderr,
    );
    assert.equal(server.wsProbes.length, 1);
    assert.equal(server.wsProbes[0]!.upgrade, 'websocket');
    assert.match(h.agent.stderr, /WebSocket transport unavailable; using HTTP polling/);
    assert.equal(server.messages[0]!.body.wait_ms, 25000);

    const { sessionId, response } = await h.startSession();
    assert.equal(response.ok, true, JSON.stringify(response));
    const started = parse(await h.waitOutput(sessionId, 'started note', (e) => parse(e).event === 'started'));
    const pid: number = started.pid;
    assert.ok(pid > 0);
    const init = parse(await h.waitOutput(sessionId, 'init line', (e) => parse(e).subtype === 'init'));
    assert.equal(init.cwd, h.projectDir, 'the CLI runs in project_path');
    assert.ok(init.env_keys.includes('OPENAI_API_KEY') && init.env_keys.includes('OPENAI_BASE_URL'));
    assert.ok(
      !init.env_keys.includes('SECRET_FROM_AGENT_ENV'),
      'secrets of the agent environment do not reach the CLI',
    );
    assert.ok(!init.env_keys.some((k: string) => k.startsWith('SVC_')));
    assert.ok(
      server.outputs(sessionId).some((e) => e.stream === 'stderr' && e.data.includes('fake-cli: starting')),
      'stderr lines become stderr outputs',
    );

    assert.deepEqual(await h.call('session.input', sessionId, { content: 'hello there' }), { ok: true });
    const reply = await h.waitOutput(
      sessionId,
      'echo',
      (e) => e.stream === 'stdout' && parse(e).type === 'assistant',
    );
    assert.equal(parse(reply).message.content[0].text, 'echo: hello there');
    await h.waitOutput(sessionId, 'result', (e) => parse(e).type === 'result');

    if (process.platform === 'linux') {
      assert.equal((await h.call('session.pause', sessionId)).ok, true);
      // SIGSTOP is sent when pause answers; the process shows 'T' once the kernel has stopped it,
      // which on a loaded machine can be a moment later.
      await waitFor('paused CLI is stopped', () => procState(pid) === 'T');
      assert.ok(server.acked.some((e) => e.type === 'session_state' && e.state === 'paused'));
      assert.equal((await h.call('session.resume', sessionId)).ok, true);
      await waitFor('CLI continued', () => procState(pid) !== 'T');
      assert.match(procState(pid) ?? '', /[SR]/);
    }

    assert.equal((await h.call('session.stop', sessionId)).ok, true);
    const exited = await waitFor('exited state', () =>
      server.acked.find(
        (e) => e.type === 'session_state' && e.session_id === sessionId && e.state === 'exited',
      ),
    );
    assert.ok('exit_code' in exited);
    await waitFor('CLI process gone', () => procState(pid) === null || procState(pid) === 'Z');

    // Outputs of one run are numbered 1..n without gaps.
    const seqs = server.outputs(sessionId).map((e) => e.seq);
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
    );
    assert.ok(server.outputs(sessionId).every((e) => e.run_id === response.run_id && e.timestamp));
    assert.deepEqual(await h.call('session.input', sessionId, { content: 'x' }), {
      ok: false,
      error: `unknown session ${sessionId}`,
    });

    const { code } = await h.agent.stop();
    assert.equal(code, 0);
    assert.ok(!h.agent.stderr.includes(server.agentToken), 'agent token never logged');
    assert.ok(!h.agent.stderr.includes('proxy-token-1'), 'proxy token never logged');
  });

  it('keeps one long poll open, delivers commands promptly and heartbeats while it is held', async (t) => {
    const h = await harness(t, { heartbeat_interval: 0.15 });
    const { server } = h;
    await waitFor('a long poll', () => server.heldPolls > 0);
    await new Promise((r) => setTimeout(r, 600));
    const longPolls = () => server.messages.filter((m) => m.body.wait_ms > 0);
    assert.equal(longPolls().length, 1, 'the long poll is held, not repeated');
    assert.equal(server.heldPolls, 1);
    const beats = server.messages.filter((m) => m.body.wait_ms === 0 && m.body.events.length === 0);
    assert.ok(beats.length >= 2, `heartbeats while the poll is held (got ${beats.length})`);
    assert.ok(
      beats.every((m) => m.body.heartbeat.agent_version && Array.isArray(m.body.heartbeat.active_sessions)),
    );

    const sent = Date.now();
    const id = server.enqueue('ping', null);
    const pong = await waitFor('pong', () =>
      server.acked.find((e) => e.type === 'response' && e.command_id === id),
    );
    assert.deepEqual(pong.payload, { ok: true, pong: true });
    assert.ok(Date.now() - sent < 1000, `command answered within a second (took ${Date.now() - sent} ms)`);
    // The response travelled in its own wait_ms=0 request, and a new long poll replaced the used one.
    const carrier = server.messages.find((m) => m.body.events.some((e: Json) => e.command_id === id))!;
    assert.equal(carrier.body.wait_ms, 0);
    await waitFor('a new long poll', () => server.heldPolls === 1 && longPolls().length === 2);
  });

  it('routes the CLI through the proxy; rotated token and new model resume the conversation between turns', async (t) => {
    const h = await harness(t, { cli_env: {} });
    const { server } = h;
    const { sessionId } = await h.startSession({ model: 'model-a' });
    const firstInit = parse(await h.waitOutput(sessionId, 'init', (e) => parse(e).subtype === 'init'));

    await h.call('session.input', sessionId, { content: 'one' });
    const r1 = await h.waitOutput(sessionId, 'first result', (e) => parse(e).type === 'result');
    assert.equal(parse(r1).result, 'proxy reply to "one" via model-a');
    assert.equal(server.proxyCalls[0]!.authorization, 'Bearer proxy-token-1');

    // Rotate while turn "two" is in flight: the CLI must finish that turn with the old token, and
    // message "three", sent meanwhile, must wait for the restarted CLI.
    server.proxyDelayMs = 400;
    await h.call('session.input', sessionId, { content: 'two' });
    await waitFor('turn two in flight', () => server.proxyCalls.length === 2);
    assert.equal(
      (await h.call('session.rotate_token', sessionId, { proxy_token: 'proxy-token-2' })).ok,
      true,
    );
    await h.call('session.input', sessionId, { content: 'three' });
    server.proxyDelayMs = 0;
    const resultTwo = await h.waitOutput(
      sessionId,
      'result two',
      (e) => parse(e).result === 'proxy reply to "two" via model-a',
    );
    assert.equal(
      server.proxyCalls[1]!.authorization,
      'Bearer proxy-token-1',
      'turn two finished on the old CLI',
    );
    const restarting = await h.waitOutput(sessionId, 'restart note', (e) => parse(e).event === 'restarting');
    assert.ok(restarting.seq > resultTwo.seq, 'the restart waited for the end of the turn');
    const resumed = parse(
      await h.waitOutput(
        sessionId,
        'restarted',
        (e) => parse(e).event === 'started' && parse(e).resumed === true,
      ),
    );
    assert.ok(resumed.pid > 0);
    await h.waitOutput(
      sessionId,
      'result three',
      (e) => parse(e).result === 'proxy reply to "three" via model-a',
    );
    assert.equal(server.proxyCalls.length, 3);
    assert.equal(
      server.proxyCalls[2]!.authorization,
      'Bearer proxy-token-2',
      'the rotated token reached the CLI',
    );
    const inits = () =>
      server
        .outputs(sessionId)
        .filter((e) => parse(e).subtype === 'init')
        .map(parse);
    assert.equal(inits().length, 2);
    assert.equal(inits()[1]!.session_id, firstInit.session_id, 'the new CLI resumed the same conversation');

    assert.equal((await h.call('session.set_model', sessionId, { model: 'model-b' })).ok, true);
    await waitFor('third init', () => inits().length === 3);
    assert.equal(inits()[2]!.model, 'model-b');
    assert.equal(inits()[2]!.session_id, firstInit.session_id);
    await h.call('session.input', sessionId, { content: 'four' });
    await h.waitOutput(
      sessionId,
      'fourth result',
      (e) => parse(e).result === 'proxy reply to "four" via model-b',
    );

    // Tool permission round trip, and abort.
    await h.call('session.input', sessionId, { content: '/tool ls -la' });
    const ask = await h.waitOutput(sessionId, 'permission request', (e) => e.stream === 'permission');
    const requestId = parse(ask).request_id;
    assert.equal(
      (await h.call('session.permission_response', sessionId, { request_id: requestId, decision: 'allow' }))
        .ok,
      true,
    );
    const ack = parse(
      await h.waitOutput(sessionId, 'permission ack', (e) => parse(e).subtype === 'permission_ack'),
    );
    assert.deepEqual(ack.response, { behavior: 'allow', updatedInput: { command: 'ls -la' } });
    const again = await h.call('session.permission_response', sessionId, {
      request_id: requestId,
      decision: 'allow',
    });
    assert.equal(again.ok, false, 'a request is answered once');
    await h.call('session.abort', sessionId);
    await h.waitOutput(sessionId, 'interrupted result', (e) => parse(e).subtype === 'interrupted');
  });

  it('refuses sessions beyond max_sessions, without project_path, or for an unknown tool', async (t) => {
    const h = await harness(t, { max_sessions: 1 });
    const { server } = h;
    const first = await h.startSession();
    assert.equal(first.response.ok, true);
    const second = await h.startSession();
    assert.equal(second.response.ok, false);
    assert.match(second.response.error, /max_sessions \(1\)/);
    await waitFor(
      'refusal note and exit state',
      () =>
        server.outputs(second.sessionId).some((e) => parse(e).event === 'start_refused') &&
        server.acked.some(
          (e) => e.type === 'session_state' && e.session_id === second.sessionId && e.state === 'exited',
        ),
    );
    await h.call('session.stop', first.sessionId);
    await waitFor('first exited', () =>
      server.acked.some(
        (e) => e.type === 'session_state' && e.session_id === first.sessionId && e.state === 'exited',
      ),
    );
    const noPath = await h.startSession({ project_path: join(h.projectDir, 'missing') });
    assert.match(noPath.response.error, /is not a directory/);
    const unknownTool = await h.startSession({ cli_tool: 'some_other_cli' });
    assert.equal(unknownTool.response.ok, true, 'unknown tools use the generic adapter with cli_path');
    const heartbeat = await waitFor('heartbeat listing the session', () =>
      server.messages.find((m) => m.body.heartbeat.active_sessions.includes(unknownTool.sessionId)),
    );
    assert.ok(heartbeat);

    // SIGTERM with a session still running: the CLI is stopped and its end reported before exit.
    const { code } = await h.agent.stop();
    assert.equal(code, 0);
    assert.ok(
      server.acked.some(
        (e) => e.type === 'session_state' && e.session_id === unknownTool.sessionId && e.state === 'exited',
      ),
      'exit of the running session reported during shutdown',
    );
  });

  it('reconnects after the server goes away and re-sends unacknowledged events', async (t) => {
    const h = await harness(t);
    const { server } = h;
    const { sessionId } = await h.startSession();
    await h.waitOutput(sessionId, 'init', (e) => parse(e).subtype === 'init');
    const port = server.port;

    // Deliver one input, then vanish before the CLI's answer can be sent.
    let down: Promise<void> | undefined;
    server.afterDelivered = () => {
      server.afterDelivered = undefined;
      down = server.stop();
    };
    const inputId = server.enqueue('session.input', sessionId, { content: 'while you were away' });
    await waitFor('server down', () => down);
    await down;
    await new Promise((r) => setTimeout(r, 400)); // several failed retries (backoff 50..200 ms)
    assert.ok(
      !server.acked.some((e) => e.command_id === inputId),
      'nothing was acknowledged by the dead server',
    );

    // Back on the same port; the first request carrying events is not acknowledged either.
    server.failEventRequests = 1;
    await server.start(port);
    const echo = await h.waitOutput(
      sessionId,
      'echo after reconnect',
      (e) =>
        parse(e).type === 'assistant' && parse(e).message.content[0].text === 'echo: while you were away',
    );
    assert.ok(
      server.acked.some((e) => e.type === 'response' && e.command_id === inputId),
      'response re-sent',
    );
    // The batch refused with 503 came again: same (run_id, seq) received twice, acknowledged once.
    const key = (e: Json) => `${e.run_id}/${e.seq}`;
    const receivedTwice = server.received.filter((e) => e.type === 'output' && key(e) === key(echo));
    assert.equal(receivedTwice.length, 2, 'the unacknowledged event was sent again');
    assert.equal(server.acked.filter((e) => e.type === 'output' && key(e) === key(echo)).length, 1);
    const seqs = server.outputs(sessionId).map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      'order kept across retries',
    );
    assert.match(h.agent.stderr, /server unreachable/);
    await waitFor('reconnect logged', () => /server reachable again/.test(h.agent.stderr));
    await waitFor('long poll re-established', () => server.heldPolls === 1);
  });

  it('runs per-turn CLIs (Codex style): one process per message, resuming the thread', async (t) => {
    const h = await harness(t, { cli_tool: 'cli_gamma' });
    const { sessionId, response } = await h.startSession({ cli_tool: 'cli_gamma', model: 'm-1' });
    assert.equal(response.ok, true);
    await h.call('session.input', sessionId, { content: 'first' });
    const t1 = parse(await h.waitOutput(sessionId, 'thread', (e) => parse(e).type === 'thread.started'));
    await h.waitOutput(sessionId, 'turn 1 done', (e) => parse(e).event === 'turn_finished');
    await h.call('session.rotate_token', sessionId, { proxy_token: 'proxy-token-2' });
    await h.call('session.input', sessionId, { content: 'second' });
    await h.waitOutput(sessionId, 'reply 2', (e) => parse(e).item?.text === 'echo: second');
    const threads = h.server
      .outputs(sessionId)
      .filter((e) => parse(e).type === 'thread.started')
      .map(parse);
    assert.equal(threads.length, 2);
    assert.equal(threads[1]!.thread_id, t1.thread_id, 'second turn resumed the thread');
    const starts = h.server
      .outputs(sessionId)
      .filter((e) => parse(e).event === 'started')
      .map(parse);
    assert.equal(starts.length, 2);
    assert.notEqual(starts[0]!.pid, starts[1]!.pid, 'a new process per turn');
  });

  it('stops with exit code 3 and a clear message when the server rejects its token', async (t) => {
    const h = await harness(t, {});
    h.server.rejectAuth = true;
    const { code } = await h.agent.exited;
    assert.equal(code, 3);
    assert.match(h.agent.stderr, /rejected this agent token/);
  });

  it('register fails clearly, exits non-zero and says a new token is needed', async (t) => {
    const server = new ProtocolServer();
    await server.start();
    t.after(() => server.stop());
    const dir = mkdtempSync(join(tmpdir(), 'agent-e2e-reg-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ server_url: server.url, registration_token: 'wrong' }));
    const reg = new AgentProcess(['--config', configPath, 'register']);
    const { code } = await reg.exited;
    assert.equal(code, 1);
    assert.match(reg.stderr, /Registration failed: the server refused the registration token/);
    assert.match(reg.stderr, /new one/);
    assert.equal(JSON.parse(readFileSync(configPath, 'utf8')).registration_token, undefined);
    assert.ok(existsSync(configPath));
  });
});
