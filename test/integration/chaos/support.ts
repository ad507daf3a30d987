// Chaos tests (issue 16 item 3): a cluster of separate processes (`bin/api.ts` on a fixed port,
// `bin/worker.ts`) over one database and one Temporal server, a workload that runs while one component
// is killed with SIGKILL and started again, and the ledger the invariant checker (./invariants.ts)
// compares with what the database and the session output hold afterwards.
//
// The workload, as real clients do it:
//   - a remote session: the real agent program (agent/main.ts) drives the fake CLI, which echoes each
//     chat line; chats are POSTed one after another with unique contents and never retried (a user whose
//     POST failed types again: a new command), so each acknowledged chat must reach the CLI exactly once
//     and in order, and its echo (an output line the agent sends until it gets a 200) must be stored once;
//   - usage uploads in batches to POST /api/upload/batch, each batch re-sent with the same message ids
//     until it is answered 2xx (the collector's idempotent retry), so every message ends acknowledged and
//     must be stored once, with the user's quota counters equal to the distinct set.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrapAdmin } from '../../../bin/bootstrap-admin.ts';
import { freePort } from '../../../bin/temporal-dev.ts';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { upgrade } from '../../../migrations/runner.ts';
import { createTenant, createUser, PASSWORD } from '../../support/actors.ts';
import { ADMIN, type TestApp } from '../../support/harness.ts';
import { nodeEntry } from '../../support/node-entry.ts';
import { workerPolls } from '../../support/readiness.ts';
import {
  type AgentProcess,
  assign,
  cliPid,
  REPO,
  registrationToken,
  sessionOutput,
  sleep,
  startAgent,
  waitUntil,
} from '../../support/remote.ts';
import { api, login, type Session } from '../../support/session.ts';
import { shareWorkflowBundle } from '../../support/svc-processes.ts';
import { autonomousEnv } from './autonomous.ts';
import type { Ledger, Observed } from './invariants.ts';

export const UPLOAD_KEY = 'chaos-upload-key';

export interface Proc {
  child: ChildProcess;
  output(): string;
  exited: Promise<void>;
}

export type Component = 'api' | 'worker';

export interface Cluster {
  url: string;
  port: number;
  database: DatabaseHandle;
  temporalAddress: string;
  procs: Partial<Record<Component, Proc>>;
  start(which: Component): Promise<void>;
  /** SIGKILL, and wait until the process is gone. */
  kill(which: Component): Promise<void>;
  /** The API answers /readyz 200 (it reaches the database) and reports a worker polling. */
  ready(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startCluster(opts: {
  databaseUrl?: string;
  dataDir?: string;
  temporalAddress: string;
  /** More environment for the API and worker processes. */
  env?: Record<string, string>;
}): Promise<Cluster> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'svc-chaos-'));
  const sqlitePath = path.join(dataDir, 'svc.sqlite');
  // The worker (and a restarted one) reads the workflow bundle the test files share instead of bundling.
  await shareWorkflowBundle(dataDir);
  const database = await openDatabase({ databaseUrl: opts.databaseUrl, sqlitePath });
  await upgrade(database, 'head');
  await bootstrapAdmin(database, { username: ADMIN.username, password: ADMIN.password }, () => {});
  const port = await freePort();
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    DATABASE_URL: opts.databaseUrl ?? '',
    TEMPORAL_ADDRESS: opts.temporalAddress,
    TEMPORAL_TASK_QUEUE: `chaos-${randomUUID().slice(0, 8)}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SVC_ENCRYPTION_KEY: 'test-encryption-key',
    SECRET_KEY: 'test-secret-key',
    SVC_UPLOAD_AUTH_KEY: UPLOAD_KEY,
    SVC_TEMPORAL_DEV_PORT: '0',
    SVC_TEMPORAL_UI_PORT: '0',
    ...autonomousEnv(`http://127.0.0.1:${port}`),
    ...opts.env,
  };
  const url = `http://127.0.0.1:${port}`;
  const procs: Partial<Record<Component, Proc>> = {};
  const launch = (script: Component): Proc => {
    const child = spawn(process.execPath, nodeEntry(`bin/${script}.ts`), {
      cwd: REPO,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const keep = (b: Buffer) => {
      out = (out + b.toString()).slice(-20_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    return { child, output: () => out, exited };
  };
  const cluster: Cluster = {
    url,
    port,
    database,
    temporalAddress: opts.temporalAddress,
    procs,
    async start(which) {
      const p = launch(which);
      procs[which] = p;
      if (which === 'api')
        await waitUntil(
          `the API listening (output: ${p.output().slice(-500)})`,
          async () => {
            if (p.child.exitCode !== null) throw new Error(`the API exited: ${p.output().slice(-2000)}`);
            return /API listening on/.test(p.output());
          },
          60_000,
          100,
        );
      else
        await waitUntil(
          'the worker running',
          async () => {
            if (p.child.exitCode !== null) throw new Error(`the worker exited: ${p.output().slice(-2000)}`);
            return /worker polling task queue/.test(p.output());
          },
          60_000,
          100,
        );
    },
    async kill(which) {
      const p = procs[which];
      if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
      p.child.kill('SIGKILL');
      await p.exited;
    },
    async ready(timeoutMs = 60_000) {
      await waitUntil('/readyz 200 with a worker polling', () => workerPolls(url), timeoutMs, 100);
    },
    async close() {
      for (const p of Object.values(procs)) {
        if (p && p.child.exitCode === null && p.child.signalCode === null) {
          p.child.kill('SIGTERM');
          await Promise.race([p.exited, sleep(10_000)]);
          if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        }
      }
      await database.close();
    },
  };
  return cluster;
}

/** A user with a session on a machine the real agent serves; the CLI is running. */
export interface World {
  cluster: Cluster;
  user: { id: number; username: string; session: Session };
  tenantId: number;
  agent: AgentProcess;
  machineId: string;
  sessionId: string;
}

export async function prepareWorld(cluster: Cluster): Promise<World> {
  const app = { url: cluster.url } as TestApp;
  const admin = await login(cluster.url, ADMIN.username, ADMIN.password);
  const tenantId = await createTenant(app, admin);
  const u = await createUser(app, admin, { role: 'user', tenant_id: tenantId });
  const session = await login(cluster.url, u.username, PASSWORD);
  const token = await registrationToken(cluster.url, admin, tenantId);
  const agent = startAgent({ serverUrl: cluster.url, registrationToken: token });
  const machineId = await waitUntil(
    'agent registration',
    async () => agent.config().agent_token && (agent.config().machine_id as string),
    30_000,
  );
  await waitUntil(
    'machine online',
    async () =>
      (await api(cluster.url, 'GET', `/api/remote/machines/${machineId}`, { auth: admin })).body?.status ===
      'online',
    30_000,
  );
  assert.equal((await assign(cluster.url, admin, machineId, u.id, 'user')).status, 200);
  const projectDir = mkdtempSync(path.join(os.tmpdir(), 'svc-chaos-project-'));
  const created = await api(cluster.url, 'POST', '/api/remote/sessions', {
    auth: session,
    body: { machine_id: machineId, project_path: projectDir, cli_tool: 'cli_alpha', title: 'chaos' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const sessionId = created.body.session_id as string;
  await cliPid(cluster.url, session, sessionId);
  return {
    cluster,
    user: { id: u.id, username: u.username, session },
    tenantId,
    agent,
    machineId,
    sessionId,
  };
}

export interface WorkloadPlan {
  /** Chats to get acknowledged. */
  chats: number;
  /** Upload batches, each of `batchSize` messages. */
  batches: number;
  batchSize: number;
}

export interface Workload {
  ledger: Ledger;
  /** Resolves when every chat and every batch was acknowledged. */
  done: Promise<void>;
  stop(): void;
}

const isAck = (status: number) => status >= 200 && status < 300;

async function attempt<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch {
    return undefined; // connection refused or reset: the component is down
  }
}

/** Starts the chat and upload loops; they keep going (and failing) while a component is down. */
export function runWorkload(world: World, plan: WorkloadPlan): Workload {
  const { url } = world.cluster;
  const ledger: Ledger = {
    chatsAcked: [],
    chatsUnacked: [],
    messagesAcked: new Map(),
    uploadAttempts: 0,
    uploadFailures: 0,
  };
  let stopped = false;
  const date = new Date().toISOString().slice(0, 10);
  const run = randomUUID().slice(0, 8);

  const chats = (async () => {
    let n = 0;
    while (!stopped && ledger.chatsAcked.length < plan.chats) {
      const content = `chaos-${run}-${String(++n).padStart(5, '0')}`;
      const r = await attempt(() =>
        api(url, 'POST', `/api/remote/sessions/${world.sessionId}/chat`, {
          auth: world.user.session,
          body: { content },
        }),
      );
      if (r && isAck(r.status)) ledger.chatsAcked.push(content);
      else {
        ledger.chatsUnacked.push(content);
        await sleep(100);
      }
      await sleep(10);
    }
  })();

  const uploads = (async () => {
    for (let b = 0; b < plan.batches && !stopped; b++) {
      const messages = Array.from({ length: plan.batchSize }, (_, k) => ({
        message_id: `chaos-${run}-${b}-${k}`,
        role: k % 2 ? 'user' : 'assistant',
        content: 'chaos',
        input_tokens: 10 + k,
        output_tokens: 5 + b,
        date,
        tool_name: 'chaos-tool',
        host_name: 'chaos-host',
        sender_name: world.user.username,
        timestamp: `${date}T10:00:00Z`,
      }));
      for (;;) {
        if (stopped) return;
        ledger.uploadAttempts++;
        const r = await attempt(() =>
          api(url, 'POST', '/api/upload/batch', {
            headers: { 'x-upload-auth': UPLOAD_KEY },
            body: { messages },
          }),
        );
        if (r && isAck(r.status)) {
          assert.equal(r.body?.messages?.rejected?.length ?? 0, 0, JSON.stringify(r.body));
          for (const m of messages)
            ledger.messagesAcked.set(m.message_id, {
              tokens: m.input_tokens + m.output_tokens,
              assistant: m.role === 'assistant',
            });
          break;
        }
        ledger.uploadFailures++;
        await sleep(100);
      }
      await sleep(20);
    }
  })();

  return {
    ledger,
    done: Promise.all([chats, uploads]).then(() => undefined),
    stop() {
      stopped = true;
    },
  };
}

/** Waits until the workload reached `fraction` of its chats (mid-operation). */
export async function reachProgress(w: Workload, chats: number): Promise<void> {
  await waitUntil(`${chats} chats acknowledged`, async () => w.ledger.chatsAcked.length >= chats, 60_000);
}

/** The fake CLI answers each chat with an assistant line, then a result line repeating the text. */
function assistantLine(data: string): boolean {
  try {
    return JSON.parse(data)?.type === 'assistant';
  } catch {
    return false;
  }
}

/** Every output event of the session (paged through the JSON replay endpoint). */
async function allOutput(world: World): Promise<any[]> {
  const events: any[] = [];
  for (let from = 0; ; ) {
    const page = await sessionOutput(world.cluster.url, world.user.session, world.sessionId, from);
    events.push(...page);
    if (page.length < 1000) return events;
    from = Number(page[page.length - 1].seq ?? from + page.length);
  }
}

/**
 * What the system holds once the workload is done: the echoes in the session output (waiting until every
 * acknowledged chat's echo arrived, or the timeout), and the stored messages and quota counters.
 */
export async function observe(world: World, ledger: Ledger, timeoutMs = 60_000): Promise<Observed> {
  const echoes = (events: any[]) =>
    events
      .filter((e) => e.stream === 'stdout' && assistantLine(String(e.data)))
      .map((e) => /echo: (chaos-[0-9a-f]{8}-\d{5})/.exec(String(e.data))?.[1])
      .filter((x): x is string => !!x);
  let echoed: string[] = [];
  const want = new Set(ledger.chatsAcked);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    echoed = echoes(await allOutput(world));
    const seen = new Set(echoed);
    if ([...want].every((c) => seen.has(c)) || Date.now() > deadline) break;
    await sleep(200);
  }
  const q = <T>(text: string, params: unknown[]) => world.cluster.database.sql.query<T>(text, params);
  const stored = await q<{ message_id: string; tokens_used: number; role: string }>(
    `SELECT message_id, tokens_used, role FROM daily_messages WHERE tool_name = 'chaos-tool'`,
    [],
  );
  const [quota] = await q<{ tokens: number; requests: number }>(
    `SELECT COALESCE(SUM(tokens_used), 0) AS tokens, COALESCE(SUM(requests_used), 0) AS requests
     FROM quota_usage WHERE user_id = ? AND period = 'daily'`,
    [world.user.id],
  );
  return {
    echoed,
    storedMessages: stored.map((r) => ({
      messageId: r.message_id,
      tokens: Number(r.tokens_used),
      assistant: r.role === 'assistant',
    })),
    quota: { tokens: Number(quota?.tokens ?? 0), requests: Number(quota?.requests ?? 0) },
  };
}
