// Keeps `npm run fuzz` honest without running schemathesis: the secret check of test/fuzz/hooks.py
// (run with python3, as schemathesis loads it) fails on each kind of planted leak and passes a clean
// body; the JUnit reader counts a failed operation as failed; the operation selection gives each
// credential its own operations and names a reason for every exclusion; documented 501s (and only
// those) become expected statuses; long polls get their own timeout and mostly short waits; real ids
// feed path parameters; the log scan finds a planted secret or hash.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fuzzerCrash, parseJunit } from '../fuzz/junit.ts';
import { leakInLogs } from '../fuzz/log-scan.ts';
import { EXCLUDED, type OpenApiDoc, operationsFor, schemathesisConfig } from '../fuzz/operations.ts';

const HOOKS = path.resolve('test/fuzz/hooks.py');
const dir = mkdtempSync(path.join(os.tmpdir(), 'fuzz-hooks-'));
const worldFile = path.join(dir, 'world.json');
writeFileSync(
  worldFile,
  JSON.stringify({
    secrets: ['sk-fuzz-provider-planted-0001', 'svcpt_own_token_value', 'svcpt_other_token_value'],
    own: 'svcpt_own_token_value',
    tenant: 7,
    markers: { 7: ['tenant-own-7', 'user-own-1'], 8: ['tenant-other-8', 'user-b-1'] },
  }),
);

function selfCheck(body: string, sent?: string): { code: number | null; out: string } {
  const args = [HOOKS, '--self-check', worldFile, ...(sent === undefined ? [] : [sent])];
  const r = spawnSync('python3', args, { input: body, encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

test('the secret check fails on a planted provider key, another token, a bcrypt hash, another tenant', () => {
  const hash = `$2b$12$${'a'.repeat(53)}`;
  for (const [body, reason] of [
    ['{"key":"sk-fuzz-provider-planted-0001"}', /secret of the seeded world/],
    ['{"token":"svcpt_other_token_value"}', /secret of the seeded world/],
    [`{"password_hash":"${hash}"}`, /bcrypt/],
    ['{"tenants":[{"name":"tenant-other-8"}]}', /another tenant's data \(tenant-other-8\)/],
    ['{"users":["user-b-1"]}', /another tenant/],
  ] as const) {
    const r = selfCheck(body);
    assert.equal(r.code, 1, `${body}: ${r.out}`);
    assert.match(r.out, reason);
  }
});

test('the secret check passes clean bodies: own token, own tenant, a longer name that merely starts alike', () => {
  for (const body of [
    '{"ok":true}',
    '{"token":"svcpt_own_token_value"}',
    '{"tenant":"tenant-own-7","user":"user-own-1"}',
    '{"user":"user-b-12"}',
    '',
  ]) {
    const r = selfCheck(body);
    assert.equal(r.code, 0, `${body}: ${r.out}`);
    assert.equal(r.out, 'clean');
  }
});

test("another tenant's id the caller sent itself may come back; its other markers may not", () => {
  const sent = 'http://127.0.0.1/api/remote/machines/user-b-1/assign\n{}';
  assert.equal(selfCheck('{"resource_id":"user-b-1"}', sent).code, 0);
  const r = selfCheck('{"resource_id":"user-b-1","tenant":"tenant-other-8"}', sent);
  assert.equal(r.code, 1);
  assert.match(r.out, /tenant-other-8/);
});

test('a system-wide caller (tenant null) may see every tenant, never a secret', () => {
  const file = path.join(dir, 'system.json');
  writeFileSync(
    file,
    JSON.stringify({ secrets: ['sk-planted-2'], own: '', tenant: null, markers: { 8: ['tenant-other-8'] } }),
  );
  const run = (body: string) =>
    spawnSync('python3', [HOOKS, '--self-check', file], { input: body, encoding: 'utf8' }).status;
  assert.equal(run('{"name":"tenant-other-8"}'), 0);
  assert.equal(run('{"k":"sk-planted-2"}'), 1);
});

test('the JUnit reader counts failures and errors as failed, with their message', () => {
  const xml = `<?xml version="1.0"?><testsuites><testsuite name="schemathesis" tests="3">
    <testcase name="GET /api/a" />
    <testcase name="POST /api/b"><failure type="failure" message="1. Server error">1. Test Case ID: x&#10;- ST101 Server error &amp; more</failure></testcase>
    <testcase name="GET /api/c"><error type="error" message="Runtime Error">boom</error></testcase>
    <testcase name="GET /api/d"><skipped message="Time limit reached" /></testcase>
  </testsuite></testsuites>`;
  const out = parseJunit(xml);
  assert.deepEqual(
    out.map((o) => [o.operation, o.status]),
    [
      ['GET /api/a', 'passed'],
      ['POST /api/b', 'failed'],
      ['GET /api/c', 'failed'],
      ['GET /api/d', 'skipped'],
    ],
  );
  assert.match(out[1]!.message, /ST101 Server error & more/);
  assert.equal(out[2]!.message, 'boom');
});

test("schemathesis's own crashes while generating inputs are told apart from our API's failures", () => {
  // Two real crashes of a CI run (test-artifacts/fuzz/upload_key.junit.xml), shortened.
  const crashes = [
    'Runtime Error\n\nAST constructor recursion depth mismatch (before=180, after=219)\n\n    Traceback (most recent call last):\n      File "/root/.cache/svc/schemathesis-4.32.5/lib/python3.11/site-packages/schemathesis/generation/drivers.py", line 187, in __iter__\n    SystemError: AST constructor recursion depth mismatch',
    'Runtime Error\n\nInconsistent results: A test case failed on the first run but now succeeds\n  |   File "/root/.cache/svc/schemathesis-4.32.5/lib/python3.11/site-packages/schemathesis/specs/openapi/coverage/_schema.py", line 2872, in drop_negatives_any_draft_admits',
  ];
  for (const m of crashes) assert.equal(fuzzerCrash(m), true, m.slice(0, 60));
  const ours = [
    '1. Test Case ID: x\n- Server error\n[500] Internal Server Error',
    'Runtime Error\n\nboom',
    'Runtime Error\n\nResponse status code 500 from schemathesis/generation/drivers.py',
    '- Undocumented HTTP status code\n  Received: 418',
  ];
  for (const m of ours) assert.equal(fuzzerCrash(m), false, m.slice(0, 60));
});

const DOC: OpenApiDoc = {
  paths: {
    '/api/auth/logout': { post: { operationId: 'post_logout', security: [{ sessionBearer: [] }] } },
    '/api/alerts': {
      get: { operationId: 'get_alerts', security: [{ sessionCookie: [] }, { sessionBearer: [] }] },
    },
    '/api/remote/agent/ws': { get: { operationId: 'get_ws', security: [], responses: { 200: {}, 501: {} } } },
    '/api/remote/agent/message': { post: { operationId: 'post_message', security: [{ agentToken: [] }] } },
    '/api/upload/batch': { post: { operationId: 'post_batch', security: [{ uploadKey: [] }] } },
    '/api/remote/llm-proxy': {
      post: { operationId: 'post_proxy', security: [{ proxyToken: [] }, { proxyTokenHeader: [] }] },
    },
  },
};

test('each credential gets its own operations; exclusions are named with a reason', () => {
  const ids = (r: ReturnType<typeof operationsFor>) => r.included.map((o) => o.operationId).sort();
  const session = operationsFor(DOC, ['session', 'anonymous'], true);
  assert.deepEqual(ids(session), ['get_alerts', 'get_ws']);
  assert.deepEqual(
    session.excluded.map((o) => o.operationId),
    ['post_logout'],
  );
  assert.ok(session.excluded[0]!.reason.length > 20);
  assert.deepEqual(ids(operationsFor(DOC, ['agentToken'], true)), ['post_message']);
  assert.deepEqual(ids(operationsFor(DOC, ['proxyToken'], true)), ['post_proxy']);
  assert.deepEqual(ids(operationsFor(DOC, ['uploadKey'], true)), ['post_batch']);
  const anonymous = operationsFor(
    DOC,
    ['anonymous', 'session', 'agentToken', 'proxyToken', 'uploadKey'],
    false,
  );
  assert.equal(anonymous.included.length, 6, 'the anonymous caller tries every operation, logout included');
  for (const reason of Object.values(EXCLUDED)) assert.ok(reason.length > 20);
});

test('only a documented 501 becomes an expected status of not_a_server_error', () => {
  const config = schemathesisConfig(operationsFor(DOC, ['session', 'anonymous'], true).included);
  assert.match(config, /include-operation-id = "get_ws"/);
  assert.match(config, /expected-statuses = \["2xx","3xx","4xx","501"\]/);
  assert.doesNotMatch(config, /get_alerts/);
});

test('long polls get a timeout above their longest wait and mostly short waits; real ids feed path parameters', () => {
  const ops = operationsFor(DOC, ['agentToken'], true).included;
  const config = schemathesisConfig(ops, { id: ['m-1', 7], tenant_id: [3] });
  assert.match(config, /\[dictionaries\.short_wait\]\nvalues = \[0, 1, 50\]/);
  assert.match(config, /include-operation-id = "post_message"\nrequest-timeout = 30\n/);
  assert.match(config, /"body\.wait_ms" = \{ dictionary = "short_wait", probability = 0\.95 \}/);
  assert.match(config, /\[dictionaries\.id\]\nvalues = \["m-1",7\]/);
  assert.match(config, /"path\.tenant_id" = \{ dictionary = "tenant_id", probability = 0\.5 \}/);
});

test('the log scan finds a planted secret or bcrypt hash, and passes clean lines', () => {
  const secrets = ['sk-fuzz-provider-planted-0001'];
  assert.equal(leakInLogs(['{"msg":"request completed"}', '{"msg":"ok"}'], secrets), undefined);
  assert.match(
    leakInLogs(['{"msg":"a"}', '{"key":"sk-fuzz-provider-planted-0001"}'], secrets)!,
    /log line 2/,
  );
  assert.match(leakInLogs([`{"h":"$2b$04$${'x'.repeat(53)}"}`], secrets)!, /bcrypt/);
});
