// Temporal going away under a connected API (issue 27, items 1 and 3), on a Temporal dev server of this
// file's own that is killed: everything that needs Temporal (session create and controls, autonomous
// create, org sync) answers 503 with Retry-After within a bound, whatever nesting the client gave the
// gRPC status, and leaves nothing half-created; /readyz stays 200 and reports background services
// unavailable. Then an API against a namespace that does not exist: /readyz names it and the fix,
// controls answer 503.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type DevServer, startDevServer } from '../../bin/temporal-dev.ts';
import { remoteSessionsRepository } from '../../db/repositories/remote-sessions.ts';
import {
  BACKGROUND_RETRY_AFTER_SECONDS,
  BACKGROUND_UNAVAILABLE,
  namespaceMissingDetail,
} from '../../services/temporal-unavailable.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  buildRemoteCast,
  type FakeMachine,
  registerFakeMachine,
} from '../support/remote.ts';
import { api, login, type Session } from '../support/session.ts';
import { type ApiWorld, startApiWorld } from './autonomous/api-support.ts';

/** A bound on the answer, not a measurement: the Temporal client alone used to retry for ~20 s. */
const ANSWER_BOUND_MS = 10_000;

const cliPath = process.env.TEMPORAL_CLI_PATH ?? 'temporal';

/** A request that must answer 503 "Background processing is unavailable" with Retry-After, in time. */
async function unavailable(url: string, method: string, p: string, auth: Session, body: unknown = {}) {
  const started = Date.now();
  const r = await api(url, method, p, { auth, body });
  const tookMs = Date.now() - started;
  assert.equal(r.status, 503, `${p}: ${r.status} ${JSON.stringify(r.body)}`);
  assert.deepEqual(r.body, { error: BACKGROUND_UNAVAILABLE });
  assert.equal(r.res.headers.get('retry-after'), String(BACKGROUND_RETRY_AFTER_SECONDS));
  assert.ok(tookMs < ANSWER_BOUND_MS, `${p} answered after ${tookMs} ms`);
  return `${method} ${p.replace(/[0-9a-f-]{36}/, ':id')} 503 in ${tookMs} ms`;
}

async function onlineMachine(app: TestApp, admin: Session, tenantId: number, user: Session) {
  const machine = await registerFakeMachine(app.url, admin, tenantId);
  assert.equal((await assign(app.url, admin, machine.machineId, user.user.id, 'user')).status, 200);
  return machine;
}
const heartbeat = async (app: TestApp, m: FakeMachine) =>
  assert.equal((await agentMessage(app.url, m)).status, 200);

/** A session row bound to the machine, as the workflow's bind step writes it. */
async function boundSession(app: TestApp, tenantId: number, m: FakeMachine, user: Session) {
  const sessionId = randomUUID();
  await remoteSessionsRepository(app.database).insertIfAbsent({
    sessionId,
    tenantId,
    toolName: 'cli_alpha',
    userId: user.user.id,
    status: 'active',
    projectPath: '/tmp',
    remoteMachineId: m.machineId,
  });
  return sessionId;
}

const count = async (app: TestApp, sql: string, params: unknown[] = []) =>
  Number((await app.database.sql.query<{ n: number }>(sql, params))[0]!.n);

describe('Temporal stopped after the API connected', () => {
  const temporalDir = mkdtempSync(path.join(os.tmpdir(), 'svc-outage-temporal-'));
  let dev: DevServer | undefined;
  let w: ApiWorld;
  before(async () => {
    dev = await startDevServer({ cliPath, dataDir: temporalDir, ephemeralPorts: true });
    w = await startApiWorld({
      env: {
        TEMPORAL_ADDRESS: dev.address,
        SVC_CHATPLAT_A__APP_KEY: 'key-a',
        SVC_CHATPLAT_A__APP_SECRET: 'outage-secret',
        SVC_CHATPLAT_A__API_BASE_URL: 'http://127.0.0.1:9/',
      },
    });
  });
  after(async () => {
    await w?.close();
    await dev?.stop().catch(() => undefined);
    rmSync(temporalDir, { recursive: true, force: true });
  });

  test('session create and pause, autonomous create and org sync answer 503 with Retry-After; readyz stays 200', async (t) => {
    const { app } = w;
    const admin = await login(app.url, 'admin', 'admin-password-123');
    const machine = await onlineMachine(app, admin, w.cast.tenantA, w.owner);
    const sessionId = await boundSession(app, w.cast.tenantA, machine, w.owner);
    // Connected: the API's client reached this server (readyz describes the task queue).
    await app.deps.temporal.client();
    const up = await api(app.url, 'GET', '/readyz', { auth: admin });
    assert.match(up.body.checks.background_services.detail, /no worker polls/);

    const killed = dev!.child;
    const gone = new Promise((r) => killed.once('exit', r));
    process.kill(-killed.pid!, 'SIGKILL');
    await gone;
    dev = undefined;

    await heartbeat(app, machine);
    t.diagnostic(
      await unavailable(app.url, 'POST', '/api/remote/sessions', w.owner, {
        machine_id: machine.machineId,
        project_path: '/tmp',
        cli_tool: 'cli_alpha',
      }),
    );
    t.diagnostic(await unavailable(app.url, 'POST', `/api/remote/sessions/${sessionId}/pause`, w.owner));
    t.diagnostic(
      await unavailable(app.url, 'POST', '/api/autonomous/workflows', w.owner, {
        requirement: 'Add a --json flag',
        project_path: w.project.path,
      }),
    );
    t.diagnostic(
      await unavailable(app.url, 'POST', '/api/admin/chatplat_a/sync', w.platformAdmin, {
        tenant_id: w.cast.tenantA,
      }),
    );

    // Nothing half-created: no session but the bound one, no autonomous row, no open sync run (a
    // second sync is refused for Temporal again, not as "already running").
    assert.equal(
      await count(app, 'SELECT COUNT(*) AS n FROM agent_sessions WHERE remote_machine_id = ?', [
        machine.machineId,
      ]),
      1,
    );
    const [paused] = await app.database.sql.query<{ status: string }>(
      'SELECT status FROM agent_sessions WHERE session_id = ?',
      [sessionId],
    );
    assert.equal(paused!.status, 'active');
    assert.equal(
      await count(
        app,
        'SELECT (SELECT COUNT(*) FROM autonomous_workflows) + (SELECT COUNT(*) FROM autonomous_batches) AS n',
      ),
      0,
    );
    t.diagnostic(
      await unavailable(app.url, 'POST', '/api/admin/chatplat_a/sync', w.platformAdmin, {
        tenant_id: w.cast.tenantA,
      }),
    );

    // Readiness is the database, schema, data and workspace directories: this instance still serves
    // chat, output, the agent and the model proxy, so it stays in the load balancer.
    const down = await api(app.url, 'GET', '/readyz', { auth: admin });
    assert.equal(down.status, 200, JSON.stringify(down.body));
    assert.equal(down.body.status, 'ready');
    assert.equal(down.body.checks.background_services.status, 'unavailable');
    assert.match(down.body.checks.background_services.detail, /Temporal unreachable at /);
    await heartbeat(app, machine);
  });
});

describe('a Temporal namespace that does not exist', () => {
  const namespace = `svc-missing-${randomUUID().slice(0, 8)}`;
  let app: TestApp;
  let admin: Session;
  before(async () => {
    app = await startTestApp({ env: { TEMPORAL_NAMESPACE: namespace } });
    admin = await login(app.url, 'admin', 'admin-password-123');
  });
  after(() => app?.close());

  test('/readyz names the namespace and the fix; session create and a control answer 503', async (t) => {
    const ready = await api(app.url, 'GET', '/readyz', { auth: admin });
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.deepEqual(ready.body.checks.background_services, {
      status: 'unavailable',
      detail: namespaceMissingDetail(namespace),
    });
    assert.equal(
      namespaceMissingDetail(namespace),
      `Temporal namespace '${namespace}' does not exist: create it with \`temporal operator namespace create ${namespace}\``,
    );
    const cast = await buildRemoteCast(app);
    const user = cast.userA.session;
    const machine = await onlineMachine(app, admin, cast.tenantId, user);
    await heartbeat(app, machine);
    t.diagnostic(
      await unavailable(app.url, 'POST', '/api/remote/sessions', user, {
        machine_id: machine.machineId,
        project_path: '/tmp',
        cli_tool: 'cli_alpha',
      }),
    );
    const sessionId = await boundSession(app, cast.tenantId, machine, user);
    t.diagnostic(await unavailable(app.url, 'POST', `/api/remote/sessions/${sessionId}/pause`, user));
  });
});
