// Operational endpoints and the edge of the API, on a real server with a real worker.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { probeWorkflow } from '../../workflows/probe.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

describe('with a worker', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ worker: true });
  });
  after(() => app.close());

  test('/livez answers without dependency checks', async () => {
    const res = await fetch(`${app.url}/livez`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'alive' });
  });

  test('/readyz reports database, schema version and background services', async () => {
    const res = await fetch(`${app.url}/readyz`);
    const body = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.status, 'ready');
    assert.equal(body.checks.database.status, 'ok');
    assert.equal(body.checks.schema_version.status, 'ok');
    assert.equal(body.checks.schema_version.compatible, true);
    assert.equal(body.checks.schema_version.current, body.checks.schema_version.required);
    assert.equal(body.checks.background_services.status, 'ok');
  });

  test('/health delegates to /readyz and is marked deprecated', async () => {
    const res = await fetch(`${app.url}/health`);
    const body = (await res.json()) as any;
    assert.equal(res.status, 200);
    assert.equal(body.deprecated, true);
    assert.equal(body.checks.database.status, 'ok');
  });

  test('/metrics exposes process metrics, request durations by route pattern and the gauges', async () => {
    await fetch(`${app.url}/readyz`);
    const text = await (await fetch(`${app.url}/metrics`)).text();
    assert.match(text, /process_cpu_user_seconds_total/);
    assert.match(
      text,
      /http_request_duration_seconds_bucket\{[^}]*method="GET",route="\/readyz",status="200"/,
    );
    assert.match(text, /svc_worker_running 1/);
    assert.match(text, /svc_database_up 1/);
  });

  test('a workflow started through the client is completed by the worker', async () => {
    const client = await app.deps.temporal.client();
    const result = await client.workflow.execute(probeWorkflow, {
      taskQueue: app.settings.TEMPORAL_TASK_QUEUE,
      workflowId: `probe-${randomUUID()}`,
      args: [{ message: 'hello' }],
    });
    assert.equal(result, 'echo: hello');
  });

  test('errors are JSON {error} with the right status and no stack', async () => {
    const missing = await fetch(`${app.url}/api/does-not-exist`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'Not found' });
    const bad = await fetch(`${app.url}/api/does-not-exist`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    assert.equal(bad.status, 400);
    const body = (await bad.json()) as any;
    assert.equal(typeof body.error, 'string');
    assert.doesNotMatch(JSON.stringify(body), /at .*\.ts:\d+/);
  });

  test('bodies over 1 MB are refused with 413 on ordinary routes', async () => {
    const big = Buffer.alloc(1024 * 1024 + 16, 0x20);
    const res = await fetch(`${app.url}/api/anything`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    assert.equal(res.status, 413);
    assert.match(((await res.json()) as any).error, /too large \(limit 1 MB\)/);
  });

  test('every response carries a request id, and a sane incoming one is kept', async () => {
    const res = await fetch(`${app.url}/livez`, { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(res.headers.get('x-request-id'), 'abc-123');
    const other = await fetch(`${app.url}/livez`, { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(other.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
  });
});

describe('without a worker', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ worker: false });
  });
  after(() => app.close());

  test('/readyz stays 200 when no worker polls the task queue, and reports background services unavailable', async () => {
    // Readiness is the spec's checks (database, schema, configuration directory, workspace): an API
    // instance without a worker still serves chat, output, the agent and the model proxy.
    const res = await fetch(`${app.url}/readyz`);
    const body = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.status, 'ready');
    assert.equal(body.checks.background_services.status, 'unavailable');
    assert.equal(body.checks.database.status, 'ok');
    assert.equal((await fetch(`${app.url}/livez`)).status, 200, 'liveness does not depend on Temporal');
  });
});
