// The production topology of docs/operators/production.md "Production deployment" on a REAL Temporal server (not the dev
// server): go.temporal.io/server with frontend, history, matching and worker in one process on
// PostgreSQL (schemas by temporal-sql-tool, config from examples/deploy/temporal, a namespace created
// with the Temporal CLI; test/support/temporal-server.ts), two `npm run api` instances behind a
// round-robin TCP balancer, two `npm run worker`s, one svc database and one shared data directory, and
// the real agent with the fake CLI connected through the balancer. Checked:
//   - a session created through instance A and chatted through B, its output streamed on both;
//   - the autonomous live activity stream of a workflow delivers events on BOTH instances;
//   - kill -9 of a worker and of an API instance (each then restarted, as systemd would): every chat
//     turn is delivered once and in order;
//   - a Temporal server restart (same ports, same databases): work continues;
//   - while Temporal is down, controls answer 503 with Retry-After within a few seconds.
// PostgreSQL only. The server binaries come from `npm run temporal:install-server` (CI's "Temporal
// server" step); without them this file fails, saying so.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { EventSource } from 'eventsource';
import { bootstrapAdmin } from '../../../bin/bootstrap-admin.ts';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { upgrade } from '../../../migrations/runner.ts';
import { tenantProjectRoot } from '../../../services/autonomous/projects.ts';
import { makeGitRepo } from '../../fixtures/git-repo.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../support/database.ts';
import { ADMIN } from '../../support/harness.ts';
import { workerPolls } from '../../support/readiness.ts';
import {
  type AgentProcess,
  buildRemoteCast,
  cliPid,
  type RemoteCast,
  sessionOutput,
  startAssignedAgent,
  waitUntil,
} from '../../support/remote.ts';
import { api, login } from '../../support/session.ts';
import {
  apiUrl,
  launchSvc,
  running,
  type SvcProcess,
  shareWorkflowBundle,
  stopSvcProcesses,
} from '../../support/svc-processes.ts';
import { startTemporalServer, type TemporalServer } from '../../support/temporal-server.ts';
import { openActivityStream, type Stream } from '../autonomous/sse-client.ts';

const skip = usingPostgres()
  ? false
  : 'the production topology (two API processes, two workers, a real Temporal server) runs on PostgreSQL (run with DATABASE_URL)';

let temporal: TemporalServer;
let testDb: TestDatabase;
let db: DatabaseHandle;
let env: Record<string, string>;
const processes: SvcProcess[] = [];
/** The two API instances' URLs, [A, B]; a restarted instance gets a new one. */
const instances: string[] = [];
let balancer: Balancer;
let cast: RemoteCast;
let agent: AgentProcess;
let machineId: string;
let sessionId: string;
/** The remote sessions' project directory (the agent works under the temp dir). */
let projectDir: string;
/** Every chat turn sent to the session, in order. */
const sent: string[] = [];
const closers: (() => void)[] = [];

interface Balancer {
  url: string;
  close(): Promise<void>;
}

/**
 * A round-robin TCP balancer over `backends()` (read per connection, so a restarted instance is picked
 * up): a backend that refuses the connection is skipped, as a load balancer's health check would.
 */
function startBalancer(backends: () => string[]): Promise<Balancer> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    client.on('error', () => {});
    const list = backends();
    const connect = (left: number) => {
      const target = new URL(list[next++ % list.length]!);
      const upstream = net.connect(Number(target.port), target.hostname);
      track(upstream);
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.on('error', () => {
        if (!connected && left > 1) connect(left - 1);
        else client.destroy();
      });
      upstream.on('close', () => connected && client.destroy());
      client.on('close', () => upstream.destroy());
    };
    connect(list.length);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      }),
    ),
  );
}

function launch(name: string, script: 'api' | 'worker') {
  // The production guide's own commands, not the test bundle of the same programs.
  const p = launchSvc(name, script, env, { asTyped: true });
  processes.push(p);
  return p;
}

/** Starts API instance `i` (0 = A, 1 = B) and waits until it is ready; its URL goes in `instances`. */
async function startInstance(i: number) {
  const p = launch(`api-${'ab'[i]}`, 'api');
  instances[i] = await apiUrl(p);
  await waitUntil(`api-${'ab'[i]}: a worker polls`, () => workerPolls(instances[i]!), 90_000, 200);
  return p;
}

const processNamed = (name: string) => processes.filter((p) => p.name === name && running(p)).at(-1)!;

function killHard(p: SvcProcess): Promise<void> {
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGKILL');
  return exited;
}

/** Every process's last output, for a failure message. */
const diagnostics = () =>
  [
    ...processes.map((p) => `--- ${p.name}\n${p.output().slice(-1500)}`),
    `--- temporal\n${temporal.output().slice(-1500)}`,
  ].join('\n');

/** The replies of the fake CLI in the session's stored output, in order (`echo: <content>`). */
async function echoes(url: string): Promise<string[]> {
  const events = await sessionOutput(url, cast.userA.session, sessionId);
  return repliesIn(events);
}

function repliesIn(events: { stream: string; data: string }[]): string[] {
  const out: string[] = [];
  const stdout = events
    .filter((e) => e.stream === 'stdout')
    .map((e) => e.data)
    .join('\n');
  for (const line of stdout.split('\n')) {
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    if (msg.type !== 'assistant') continue;
    for (const c of msg.message?.content ?? []) {
      const m = /^echo: (turn-\S+)$/.exec(c.text ?? '');
      if (m) out.push(m[1]!);
    }
  }
  return out;
}

/** One chat turn through `url`, answered by the agent's CLI (its reply stored). */
async function turn(url: string, label: string) {
  const content = `turn-${sent.length + 1}-${label}`;
  const send = () =>
    api(url, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
      auth: cast.userA.session,
      body: { content },
    });
  // A kept-alive connection through the balancer can still lead to an instance killed just before:
  // such a request reached no live instance, so it is sent once more, on a new connection.
  const r = await send().catch((err) => {
    if (/other side closed|ECONNRESET/.test(String(err?.cause?.message ?? err?.cause?.code))) return send();
    throw err;
  });
  assert.equal(r.status, 200, `chat ${content} via ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  sent.push(content);
  await waitUntil(`the reply to ${content}`, async () => (await echoes(url)).includes(content), 60_000, 100);
}

const assertTurnsOnceInOrder = async (url: string) =>
  assert.deepEqual(await echoes(url), sent, 'every turn answered once, in order');

const sessionStatus = async (url: string) =>
  (await api(url, 'GET', `/api/remote/sessions/${sessionId}`, { auth: cast.userA.session })).body.session
    ?.status;

/** A lifecycle control of the session (a workflow update) through `url`, and the status it leads to. */
async function control(url: string, action: 'pause' | 'resume', status: string) {
  const r = await api(url, 'POST', `/api/remote/sessions/${sessionId}/${action}`, {
    auth: cast.userA.session,
  });
  assert.equal(r.status, 200, `${action} via ${url}: ${r.status} ${JSON.stringify(r.body)}`);
  await waitUntil(`session ${status}`, async () => (await sessionStatus(url)) === status, 30_000, 100);
}

/** The session's live output (SSE) on one instance. */
function watchOutput(url: string) {
  const events: { stream: string; data: string }[] = [];
  const es = new EventSource(`${url}/api/remote/sessions/${sessionId}/output/stream`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), ...cast.userA.session.headers },
      }),
  });
  es.addEventListener('output', (e) => events.push(JSON.parse(e.data)));
  closers.push(() => es.close());
  return { replies: () => repliesIn(events), close: () => es.close() };
}

before(async () => {
  if (skip) return;
  const startedAt = performance.now();
  temporal = await startTemporalServer(
    process.env.DATABASE_URL!,
    `svc-topology-${randomBytes(3).toString('hex')}`,
  );
  testDb = await createTestDatabase();
  projectDir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-topology-project-')));
  db = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(db, 'head'); // the migration job, before any instance starts
  await bootstrapAdmin(db, { username: ADMIN.username, password: ADMIN.password }, () => {});
  await shareWorkflowBundle(testDb.dataDir);
  // The autonomous runner's cli_beta: prints an assistant line every second for a minute, so a
  // workflow's activity stream carries events whenever it is opened.
  const cliBeta = path.join(testDb.dataDir, 'busy-cli.sh');
  writeFileSync(
    cliBeta,
    '#!/bin/sh\ni=0\nwhile [ $i -lt 60 ]; do\n  printf \'{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"working %s"}]}}\\n\' $i\n  i=$((i+1)); sleep 1\ndone\n',
    { mode: 0o755 },
  );
  env = {
    NODE_ENV: 'production',
    DATABASE_URL: testDb.databaseUrl!,
    SVC_DATA_DIR: testDb.dataDir, // one shared data directory, as in production
    SVC_DB_POOL_MAX: '4',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TEMPORAL_TASK_QUEUE: 'svc',
    SVC_UPLOAD_AUTH_KEY: 'topology-upload-key',
    SVC_SANDBOX: 'off',
    SVC_AUTONOMOUS_ISOLATION: 'off',
    SVC_AUTONOMOUS__CLI_PATHS: JSON.stringify({ cli_beta: cliBeta }),
    // After the kill -9 of a worker, its workflows' next tasks go to the surviving worker after 1 s
    // instead of the default 10 s on the dead worker's sticky queue (the takeover checked is the same).
    SVC_TEMPORAL_STICKY_TIMEOUT_MS: '1000',
  };
  launch('worker-1', 'worker');
  launch('worker-2', 'worker');
  await Promise.all([startInstance(0), startInstance(1)]);
  balancer = await startBalancer(() => instances);
  cast = await buildRemoteCast({ url: balancer.url });
  ({ agent, machineId } = await startAssignedAgent(balancer.url, cast));
  console.log(
    `production topology up in ${((performance.now() - startedAt) / 1000).toFixed(1)} s: Temporal ${temporal.address}, ` +
      `API ${instances.join(' ')} behind ${balancer.url}`,
  );
});

after(async () => {
  for (const close of closers.splice(0)) close();
  await agent?.stop();
  await balancer?.close();
  await stopSvcProcesses(processes);
  await db?.close();
  await testDb?.drop();
  await temporal?.destroy();
});

test('a session created through instance A and chatted through B streams its output on both', {
  skip,
}, async () => {
  const [A, B] = instances as [string, string];
  const created = await api(A, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  sessionId = created.body.session_id;
  await cliPid(B, cast.userA.session, sessionId);
  const onA = watchOutput(A);
  const onB = watchOutput(B);
  await turn(B, 'via-b');
  await turn(balancer.url, 'via-balancer');
  await waitUntil('both live streams carry every reply', async () =>
    [onA, onB].every((w) => w.replies().length === sent.length),
  );
  assert.deepEqual(onA.replies(), sent, 'live output on A');
  assert.deepEqual(onB.replies(), sent, 'live output on B');
  await assertTurnsOnceInOrder(A);
});

test('the autonomous live activity stream delivers events on both API instances', { skip }, async () => {
  const [A, B] = instances as [string, string];
  const admin = await login(A, ADMIN.username, ADMIN.password);
  const key = await api(A, 'POST', '/api/remote/api-keys', {
    auth: admin,
    body: {
      provider: 'anthropic',
      key_name: 'topology key',
      api_key: 'topology-anthropic-key-0123456789',
      base_url: 'http://127.0.0.1:9',
      tenant_id: cast.tenantId,
    },
  });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const root = tenantProjectRoot(path.join(testDb.dataDir, 'projects'), cast.tenantId);
  mkdirSync(root, { recursive: true });
  const project = makeGitRepo({ 'README.md': '# app\n' }, { root });
  const created = await api(B, 'POST', '/api/autonomous/workflows', {
    auth: cast.userA.session,
    body: { requirement: 'Add a --json flag', project_path: project.path, cli_tool: 'cli_beta' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id: string = created.body.id ?? created.body.workflow?.id;
  const streams: Stream[] = [];
  try {
    for (const url of [A, B]) {
      const s = await openActivityStream(url, id, cast.userA.session);
      assert.equal(s.status, 200);
      streams.push(s);
    }
    const live = (s: Stream) => s.events.filter((e) => !['connected', 'keepalive'].includes(e.event ?? ''));
    try {
      await waitUntil(
        'activity events on both instances',
        async () => streams.every((s) => live(s).length > 0),
        60_000,
        100,
      );
    } catch (err) {
      const row = await api(A, 'GET', `/api/autonomous/workflows/${id}`, { auth: cast.userA.session });
      throw new Error(
        `${(err as Error).message}: ${streams.map((s, i) => `${'AB'[i]} ${live(s).length} events`).join(', ')}; ` +
          `workflow ${JSON.stringify(row.body).slice(0, 400)}`,
      );
    }
  } finally {
    for (const s of streams) s.close();
    await api(A, 'POST', `/api/autonomous/workflows/${id}/stop`, { auth: cast.userA.session });
  }
});

test('kill -9 of a worker and of an API instance: every turn is delivered once and in order', {
  skip,
}, async () => {
  await killHard(processNamed('worker-1'));
  // The session's controls are workflow updates: the surviving worker takes the workflow over.
  await control(balancer.url, 'pause', 'paused');
  await control(balancer.url, 'resume', 'active');
  for (const label of ['after-worker-kill-1', 'after-worker-kill-2']) await turn(balancer.url, label);
  launch('worker-1', 'worker'); // systemd's Restart=on-failure

  const watchB = watchOutput(instances[1]!);
  await killHard(processNamed('api-a'));
  // The agent's long poll on A is cut; it comes back through the balancer, which skips the dead A.
  for (const label of ['after-api-kill-1', 'after-api-kill-2', 'after-api-kill-3'])
    await turn(balancer.url, label);
  await startInstance(0);
  await turn(instances[0]!, 'on-restarted-a');
  await waitUntil(
    'the live stream on B has every reply',
    async () => watchB.replies().length === sent.length,
  );
  assert.deepEqual(watchB.replies(), sent, 'live output on B across the kills');
  await assertTurnsOnceInOrder(instances[0]!);
  await assertTurnsOnceInOrder(instances[1]!);
});

test('a Temporal server restart: work continues on the same ports and databases', { skip }, async () => {
  await temporal.stop();
  await temporal.start();
  // Controls go through Temporal again once its clients have reconnected.
  const [A, B] = instances as [string, string];
  await waitUntil(
    'pause answered after the restart',
    async () => {
      const r = await api(A, 'POST', `/api/remote/sessions/${sessionId}/pause`, { auth: cast.userA.session });
      return r.status === 200 || (r.status === 409 && (await sessionStatus(A)) === 'paused');
    },
    90_000,
    500,
  ).catch((err) => {
    throw new Error(`${err.message}\n${diagnostics()}`);
  });
  await control(B, 'resume', 'active');
  await turn(balancer.url, 'after-temporal-restart');
  await assertTurnsOnceInOrder(B);
  // A new session starts (its workflow runs on a worker that reconnected).
  const created = await api(B, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, project_path: projectDir },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await cliPid(A, cast.userA.session, created.body.session_id);
  for (const url of instances) await waitUntil(`${url}: a worker polls`, () => workerPolls(url), 60_000, 200);
});

test('while Temporal is down, controls answer 503 with Retry-After within 5 s', { skip }, async () => {
  const [A, B] = instances as [string, string];
  await temporal.stop();
  try {
    const timed = async (what: string, url: string, route: string, body?: unknown) => {
      const t0 = performance.now();
      const res = await fetch(`${url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...cast.userA.session.headers },
        body: JSON.stringify(body ?? {}),
        signal: AbortSignal.timeout(60_000),
      });
      const ms = Math.round(performance.now() - t0);
      const text = await res.text();
      console.log(
        `Temporal down: ${what} answered ${res.status} in ${ms} ms (Retry-After ${res.headers.get('retry-after')})`,
      );
      return { status: res.status, retryAfter: res.headers.get('retry-after'), ms, text };
    };
    const pause = await timed('pause', A, `/api/remote/sessions/${sessionId}/pause`);
    const create = await timed('session create', B, '/api/remote/sessions', {
      machine_id: machineId,
      project_path: projectDir,
    });
    for (const r of [pause, create]) {
      assert.equal(r.status, 503, r.text);
      assert.match(r.retryAfter ?? '', /^\d+$/, 'a Retry-After header');
      assert.ok(r.ms < 5000, `answered after ${r.ms} ms`);
    }
  } finally {
    await temporal.start();
  }
});
