// Scale-out under load (issue 16 item 3, second part): two API instances and two workers as separate
// processes (bin/api.ts, bin/worker.ts, as `npm run api|worker` start them) on one PostgreSQL database
// and one Temporal server. Scripted agents (PROTOCOL.md over HTTP, one poll at a time like the real
// agent, each poll to the other instance than the last) serve SESSIONS remote sessions; COMMANDS chat
// messages in total are posted to both instances at once (each session's messages one after the other,
// alternating instances, all sessions concurrently). Asserted:
//   - every acknowledged command reaches its agent exactly once (none lost, none twice), and each
//     session's commands arrive in the order they were acknowledged; every command ends `responded`;
//   - an SSE client of every session on EACH instance sees every output line of that session once, in
//     order, with gap-free event indices (the agents' output is appended by whichever instance their
//     poll reached; the other instance's stream is woken through LISTEN/NOTIFY);
//   - socket.io clients (/alerts, the only socket.io channel the spec offers) on both instances each
//     receive every alert raised during the load exactly once;
//   - no agent token or session token appears in any process's output.
// Throughput (commands/s, acknowledged and delivered) is printed, not asserted.
//
// The scripted agent is the observation point on purpose: the real agent drops a command id it has
// seen before (agent/agent.ts), which would hide a double delivery. PostgreSQL only: the cross-instance
// wake-ups are LISTEN/NOTIFY, and two processes writing one SQLite file is not a supported deployment.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { after, before, test } from 'node:test';
import { EventSource } from 'eventsource';
import { io, type Socket } from 'socket.io-client';
import { bootstrapAdmin } from '../../bin/bootstrap-admin.ts';
import { type DatabaseHandle, openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import type { AlertEvent } from '../../services/alerts/bus.ts';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { PASSWORD } from '../support/actors.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';
import { ADMIN, temporalAddress } from '../support/harness.ts';
import { workerPolls } from '../support/readiness.ts';
import { agentMessage, assign, type FakeMachine, registerFakeMachine, waitUntil } from '../support/remote.ts';
import { api, login, type Session } from '../support/session.ts';
import {
  apiUrl,
  launchSvc,
  type SvcProcess,
  stopSvcProcesses,
  workerDataDir,
} from '../support/svc-processes.ts';

const COMMANDS = Number(process.env.SCALE_COMMANDS ?? 10_000);
const SESSIONS = Number(process.env.SCALE_SESSIONS ?? 40);
const MACHINES = 4;
const ALERTS = 200;
const PER_SESSION = Math.ceil(COMMANDS / SESSIONS);

const skip = usingPostgres()
  ? false
  : 'two API processes and two workers on one database need PostgreSQL (run with DATABASE_URL)';
if (skip) console.log(`scale-two-instances: skipped (${skip})`);

let testDb: TestDatabase;
let db: DatabaseHandle;
const children: SvcProcess[] = [];
const closers: (() => void | Promise<void>)[] = [];

function launch(name: string, script: 'api' | 'worker', env: Record<string, string>) {
  const p = launchSvc(name, script, { DATABASE_URL: testDb.databaseUrl ?? '', ...env });
  children.push(p);
  return p;
}

let urls: [string, string];
/** Seconds from the start of before() until both APIs answered readyz 200. */
let bootSeconds = 0;

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return Number.NaN;
  }
}

before(async () => {
  if (skip) return;
  const bootStartedAt = performance.now();
  testDb = await createTestDatabase();
  db = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(db, 'head');
  await bootstrapAdmin(db, { username: ADMIN.username, password: ADMIN.password }, () => {});
  const workerDir = await workerDataDir(testDb.dataDir);
  const env = {
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_TASK_QUEUE: `scale-${randomBytes(4).toString('hex')}`,
  };
  const apis = ['api-a', 'api-b'].map((n) => launch(n, 'api', { ...env, SVC_DATA_DIR: testDb.dataDir }));
  for (const n of ['worker-1', 'worker-2']) launch(n, 'worker', { ...env, SVC_DATA_DIR: workerDir });
  urls = (await Promise.all(apis.map((a) => apiUrl(a)))) as [string, string];
  for (const url of urls) await waitUntil('a worker polls', () => workerPolls(url), 90_000, 200);
  bootSeconds = (performance.now() - bootStartedAt) / 1000;
});

after(async () => {
  for (const close of closers.splice(0)) await close();
  await stopSvcProcesses(children);
  await db?.close();
  await testDb?.drop();
});

interface Delivery {
  commandId: string;
  type: string;
  sessionId: string | null;
  content: unknown;
}

/**
 * One machine's agent: one poll at a time, each to the other instance than the last; answers every
 * command and echoes every chat content as one stdout line of its session (run_id + seq, so a resent
 * batch is de-duplicated by the server) in the next poll.
 */
function pollingAgent(machine: FakeMachine, first: 0 | 1) {
  const deliveries: Delivery[] = [];
  const controller = new AbortController();
  let stopped = false;
  let polls = 0;
  const seqs = new Map<string, number>();
  const loop = (async () => {
    let events: unknown[] = [];
    let at = first;
    while (!stopped) {
      let r: Awaited<ReturnType<typeof agentMessage>>;
      try {
        r = await agentMessage(urls[at], machine, { wait_ms: 2000, events }, controller.signal);
      } catch {
        if (stopped) break;
        continue; // same events again: the server de-duplicates outputs by (run_id, seq)
      }
      at = at === 0 ? 1 : 0;
      polls++;
      if (r.status !== 200) continue;
      events = [];
      for (const c of r.body.commands as any[]) {
        deliveries.push({
          commandId: c.command_id,
          type: c.command_type,
          sessionId: c.session_id,
          content: c.payload?.content,
        });
        events.push({ type: 'response', command_id: c.command_id, payload: { ok: true } });
        if (c.command_type === 'session.input' && c.session_id) {
          const seq = seqs.get(c.session_id) ?? 0;
          seqs.set(c.session_id, seq + 1);
          events.push({
            type: 'output',
            session_id: c.session_id,
            run_id: 'scale',
            seq,
            stream: 'stdout',
            data: String(c.payload.content),
          });
        }
      }
    }
  })();
  return {
    deliveries,
    polls: () => polls,
    async stop() {
      stopped = true;
      controller.abort();
      await loop;
    },
  };
}

interface Watcher {
  instance: number;
  sessionId: string;
  indices: number[];
  stdout: string[];
}

function watchOutput(url: string, instance: number, sessionId: string, user: Session): Promise<Watcher> {
  const w: Watcher = { instance, sessionId, indices: [], stdout: [] };
  const es = new EventSource(`${url}/api/remote/sessions/${sessionId}/output/stream`, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), ...user.headers },
      }),
  });
  closers.push(() => es.close());
  es.addEventListener('output', (e) => {
    const ev = JSON.parse(e.data);
    w.indices.push(ev.event_index);
    if (ev.stream === 'stdout') w.stdout.push(ev.data);
  });
  return new Promise((resolve, reject) => {
    es.addEventListener('open', () => resolve(w));
    es.addEventListener('error', (e) => reject(new Error(`SSE ${sessionId} on ${url}: ${e.message}`)));
  });
}

async function alertSocket(url: string, user: Session) {
  const got: AlertEvent[] = [];
  const sock: Socket = io(`${url}/alerts`, {
    transports: ['websocket'],
    reconnection: false,
    auth: { token: user.token },
  });
  closers.push(() => {
    sock.close();
  });
  sock.on('alert', (a: AlertEvent) => got.push(a));
  await new Promise<void>((resolve, reject) => {
    sock.once('ready', () => resolve());
    sock.once('connect_error', reject);
  });
  return got;
}

test(`two API instances and two workers: ${COMMANDS} chat commands over ${SESSIONS} sessions, SSE and socket.io on both`, {
  skip,
  timeout: 600_000,
}, async () => {
  const [A, B] = urls;
  const admin = await login(A, ADMIN.username, ADMIN.password);
  const slug = `scale-${randomBytes(3).toString('hex')}`;
  const tenant = await api(B, 'POST', '/api/tenants', { auth: admin, body: { name: slug, slug } });
  assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
  const tenantId: number = tenant.body.tenant.id;
  const created = await api(A, 'POST', '/api/admin/users', {
    auth: admin,
    body: { username: `${slug}-user`, password: PASSWORD, role: 'user', tenant_id: tenantId },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const user = await login(B, `${slug}-user`, PASSWORD);

  const machines: FakeMachine[] = [];
  const agents: ReturnType<typeof pollingAgent>[] = [];
  for (let m = 0; m < MACHINES; m++) {
    const machine = await registerFakeMachine(m % 2 ? B : A, admin, tenantId);
    assert.equal((await assign(A, admin, machine.machineId, user.user.id, 'user')).status, 200);
    machines.push(machine);
    agents.push(pollingAgent(machine, (m % 2) as 0 | 1));
  }
  closers.unshift(async () => {
    for (const a of agents) await a.stop();
  });
  await waitUntil(
    'every agent polled both instances',
    async () => agents.every((a) => a.polls() >= 2),
    30_000,
  );

  // The sessions, created alternately on A and B, each started by a worker through its workflow.
  const setupStartedAt = performance.now();
  const sessionIds: string[] = await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      const r = await api(s % 2 ? B : A, 'POST', '/api/remote/sessions', {
        auth: user,
        body: { machine_id: machines[s % MACHINES]!.machineId, project_path: '/tmp', cli_tool: 'cli_alpha' },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.session_id as string;
    }),
  );
  await waitUntil(
    'every session active',
    async () => {
      const r = await api(A, 'GET', '/api/remote/sessions', { auth: user });
      const active = new Set(
        (r.body.sessions as any[]).filter((s) => s.status === 'active').map((s) => s.session_id),
      );
      return sessionIds.every((id) => active.has(id));
    },
    60_000,
    200,
  );

  // Watchers: an SSE stream of every session on each instance, two alert sockets on each instance.
  const watchers = await Promise.all(
    sessionIds.flatMap((id) => urls.map((url, i) => watchOutput(url, i, id, user))),
  );
  const sockets = await Promise.all(
    [A, A, B, B].map(async (url, i) => ({ instance: i < 2 ? 0 : 1, got: await alertSocket(url, user) })),
  );

  // The load: every session's messages one after the other, alternating instances; all sessions at once.
  const sent = new Map<string, string[]>(sessionIds.map((id) => [id, []]));
  const acked = new Map<string, { sessionId: string; content: string }>();
  let total = 0;
  const sessionsReadyIn = (performance.now() - setupStartedAt) / 1000;
  const cpuBefore = children.map(({ child }) => cpuSeconds(child.pid));
  const startedAt = performance.now();
  const senders = sessionIds.map(async (sessionId, s) => {
    for (let k = 0; k < PER_SESSION && total < COMMANDS; k++) {
      total++;
      const content = `s${s}-${k}`;
      const r = await api(urls[(s + k) % 2]!, 'POST', `/api/remote/sessions/${sessionId}/chat`, {
        auth: user,
        body: { content },
      });
      assert.equal(r.status, 200, `chat ${content}: ${r.status} ${JSON.stringify(r.body)}`);
      acked.set(r.body.command_id, { sessionId, content });
      sent.get(sessionId)!.push(content);
    }
  });
  // Alerts for the user, raised while the load runs, from a third process's connection (as a worker
  // raising one would be): every socket on either instance must receive each exactly once.
  const raised = new Set<string>();
  const alerts = (async () => {
    for (let i = 0; i < ALERTS; i++) {
      const alertId = `scale-${slug}-${i}`;
      await raiseAlert(db, {
        alertId,
        alertType: 'security',
        severity: 'warning',
        title: `scale alert ${i}`,
        message: null,
        userId: user.user.id,
        tenantId,
      });
      raised.add(alertId);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await Promise.all([...senders, alerts]);
  const ackedAt = performance.now();
  const sessionInputs = () => agents.flatMap((a) => a.deliveries).filter((d) => d.type === 'session.input');
  await waitUntil('every command delivered', async () => sessionInputs().length >= acked.size, 90_000, 100);
  const deliveredAt = performance.now();
  await waitUntil(
    'every SSE stream complete',
    async () => watchers.every((w) => w.stdout.length >= sent.get(w.sessionId)!.length),
    90_000,
    100,
  );
  const streamedAt = performance.now();
  await waitUntil(
    'every socket got every alert',
    async () => sockets.every((s) => s.got.length >= ALERTS),
    60_000,
    100,
  );
  await waitUntil(
    'every command responded',
    async () => {
      const [row] = await db.sql.query<{ n: string | number }>(
        "SELECT count(*) AS n FROM remote_runtime_commands WHERE command_type = 'session.input' AND status = 'responded'",
      );
      return Number(row!.n) === acked.size;
    },
    60_000,
    200,
  );
  const cpu = children
    .map(({ name, child }, i) => `${name} ${(cpuSeconds(child.pid) - cpuBefore[i]!).toFixed(1)}`)
    .join(', ');
  const seconds = (ms: number) => ms / 1000;
  console.log(
    `scale: ${acked.size} commands over ${SESSIONS} sessions, ${MACHINES} machines, 2 API + 2 workers; ` +
      `acknowledged in ${seconds(ackedAt - startedAt).toFixed(1)} s (${(acked.size / seconds(ackedAt - startedAt)).toFixed(0)} commands/s), ` +
      `all delivered after ${seconds(deliveredAt - startedAt).toFixed(1)} s (${(acked.size / seconds(deliveredAt - startedAt)).toFixed(0)} commands/s), ` +
      `all ${watchers.length} SSE streams complete after ${seconds(streamedAt - startedAt).toFixed(1)} s; ` +
      `CPU seconds during the load: ${cpu}; load average ${os.loadavg()[0]!.toFixed(1)}; ` +
      `processes ready in ${bootSeconds.toFixed(1)} s, ${SESSIONS} sessions created and watched in ${sessionsReadyIn.toFixed(1)} s`,
  );

  // No command lost, none delivered twice, each session's in acknowledgement order.
  assert.equal(acked.size, COMMANDS);
  const inputs = sessionInputs();
  const counts = new Map<string, number>();
  for (const d of inputs) counts.set(d.commandId, (counts.get(d.commandId) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1);
  assert.deepEqual(twice, [], 'no command delivered twice');
  assert.equal(inputs.length, COMMANDS);
  for (const id of acked.keys()) assert.equal(counts.get(id), 1, `command ${id} delivered once`);
  for (const d of inputs) assert.equal(acked.get(d.commandId)?.content, d.content, 'payload as sent');
  // Every delivered session.input came to the machine its session is bound to.
  for (const [m, a] of agents.entries())
    for (const d of a.deliveries.filter((x) => x.type === 'session.input'))
      assert.equal(sessionIds.indexOf(d.sessionId!) % MACHINES, m, 'delivered to its own machine');
  for (const sessionId of sessionIds)
    assert.deepEqual(
      inputs.filter((d) => d.sessionId === sessionId).map((d) => d.content),
      sent.get(sessionId),
      `session ${sessionId}: delivered in order`,
    );

  // Every SSE client on either instance: every line once, in order, indices without gaps.
  for (const w of watchers) {
    assert.deepEqual(
      w.indices,
      w.indices.map((_, i) => i),
      `SSE ${w.sessionId} on instance ${w.instance}: indices 0..n-1, no gap, no repeat`,
    );
    assert.deepEqual(w.stdout, sent.get(w.sessionId), `SSE ${w.sessionId} on instance ${w.instance}`);
  }

  // Every socket on either instance: every alert once.
  for (const s of sockets) {
    const ids = s.got.map((a) => a.alert_id);
    assert.equal(ids.length, ALERTS, `socket on instance ${s.instance}: no alert twice`);
    assert.deepEqual(new Set(ids), raised);
  }

  // No agent token or session token in what the four processes printed.
  const secrets = [...machines.map((m) => m.agentToken), user.token, admin.token];
  for (const { name, output } of children)
    for (const secret of secrets) assert.ok(!output().includes(secret), `${name} printed a token`);
});
