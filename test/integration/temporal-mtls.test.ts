// The Temporal connection settings against a cluster that requires TLS, a client certificate and an
// API key (the dev server behind test/fixtures/grpc-tls-proxy.ts): with TEMPORAL_TLS_* and
// TEMPORAL_API_KEY set, the worker's connection (it polls), the schedules it ensures and the API's
// client (/readyz describes the task queue) all go through TLS, present the certificate and carry the
// key; without the certificate, with a wrong key, or in plain gRPC, the cluster refuses. The key never
// appears in the logs.
// store-independent: the Temporal connection's TLS, certificate and API key
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { Connection } from '@temporalio/client';
import { loadSettings } from '../../config/settings.ts';
import { temporalConnection } from '../../config/temporal-connection.ts';
import { openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';
import { type GrpcTlsProxy, startGrpcTlsProxy } from '../fixtures/grpc-tls-proxy.ts';
import { createTestPki } from '../fixtures/tls-certs.ts';
import { createTestDatabase } from '../support/database.ts';
import { startTestApp, type TestApp, temporalAddress } from '../support/harness.ts';
import { workerPolls } from '../support/readiness.ts';

const API_KEY = `tk-${'x'.repeat(8)}-integration-SECRET-0042`;
const pki = createTestPki('temporal.internal');
let proxy: GrpcTlsProxy;
let app: TestApp | undefined;

before(async () => {
  proxy = await startGrpcTlsProxy({ upstream: temporalAddress(), pki, bearer: API_KEY });
});
after(async () => {
  await app?.close();
  await proxy?.close();
});

const secured = (extra: Record<string, string> = {}) => ({
  TEMPORAL_ADDRESS: proxy.address,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCertPath,
  TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
  TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCertPath,
  TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKeyPath,
  TEMPORAL_API_KEY: API_KEY,
  ...extra,
});

/** Client options from the settings, as the service builds them. */
const clientOptions = (env: Record<string, string | undefined>) => {
  const s = loadSettings({ SVC_DATA_DIR: pki.dir, ...env } as NodeJS.ProcessEnv);
  return temporalConnection(s, s.TEMPORAL_ADDRESS!).client;
};

test('worker, schedules and API client connect with TLS, the client certificate and the API key', async () => {
  app = await startTestApp({ worker: true, env: secured() });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (await workerPolls(app.url)) break;
    const ready: Response = await fetch(`${app.url}/readyz`);
    assert.ok(Date.now() < deadline, `/readyz never 200: ${JSON.stringify(await ready.json())}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const paths = (ua: RegExp) => new Set(proxy.calls.filter((c) => ua.test(c.userAgent)).map((c) => c.path));
  // The worker (Rust core, tonic) polls through the proxy; grpc-js (the client) ensures schedules and
  // describes the task queue for /readyz.
  const native = paths(/tonic/);
  const client = paths(/grpc-node-js/);
  assert.ok(
    [...native].some((p) => p.endsWith('/PollWorkflowTaskQueue')),
    [...native].join(' '),
  );
  assert.ok(
    [...client].some((p) => p.endsWith('/CreateSchedule')),
    [...client].join(' '),
  );
  assert.ok(
    [...client].some((p) => p.endsWith('/DescribeTaskQueue')),
    [...client].join(' '),
  );
  for (const c of proxy.calls) {
    assert.equal(c.clientCn, 'svc-worker');
    assert.equal(c.authorization, `Bearer ${API_KEY}`);
  }
  const logs = app.logs.join('\n');
  assert.match(
    logs,
    /Temporal: 127\.0\.0\.1:\d+ \(TLS, server CA .*ca\.pem, server name temporal\.internal, mTLS client certificate .*client\.pem, API key\)/,
  );
  assert.ok(!logs.includes(API_KEY), 'the API key is in the logs');
});

test('without the client certificate the TLS handshake is refused', async () => {
  const before = proxy.refusedHandshakes;
  const options = clientOptions(
    secured({
      TEMPORAL_TLS_CLIENT_CERT_PATH: undefined as never,
      TEMPORAL_TLS_CLIENT_KEY_PATH: undefined as never,
    }),
  );
  await assert.rejects(Connection.connect({ ...options, connectTimeout: 3000 }));
  assert.ok(proxy.refusedHandshakes > before, 'the proxy saw no refused handshake');
});

test('a wrong API key is refused UNAUTHENTICATED; plain gRPC to the TLS port fails', async () => {
  const wrong = await Connection.connect({
    ...clientOptions(secured({ TEMPORAL_API_KEY: 'wrong-key' })),
    connectTimeout: 3000,
  }).then(
    async (c) => {
      try {
        await c.workflowService.getSystemInfo({});
        return 'accepted';
      } catch (err) {
        return String((err as { code?: number }).code);
      } finally {
        await c.close();
      }
    },
    // Connection.connect checks the server at once: a ServiceError whose cause is the gRPC status.
    (err: Error & { code?: number; cause?: { code?: number } }) => String(err.code ?? err.cause?.code),
  );
  assert.equal(wrong, '16');
  await assert.rejects(
    Connection.connect({ ...clientOptions({ TEMPORAL_ADDRESS: proxy.address }), connectTimeout: 3000 }),
  );
});

test('npm run worker / api stop at start with the refusal in words, no stack, no key', async () => {
  const db = await createTestDatabase();
  const handle = await openDatabase({ databaseUrl: db.databaseUrl, sqlitePath: `${db.dataDir}/svc.sqlite` });
  await upgrade(handle, 'head');
  await handle.close();
  const launch = async (script: 'api' | 'worker', env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bin/${script}.ts`], {
      env: {
        ...process.env,
        SVC_DATA_DIR: db.dataDir,
        DATABASE_URL: db.databaseUrl ?? '',
        PORT: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    return { code, out };
  };
  try {
    const half = await launch('worker', secured({ TEMPORAL_TLS_CLIENT_KEY_PATH: '' }));
    assert.equal(half.code, 1);
    assert.match(
      half.out,
      /\[svc-worker\] TEMPORAL_TLS_CLIENT_CERT_PATH is set but TEMPORAL_TLS_CLIENT_KEY_PATH is not: mTLS needs the client certificate and its private key/,
    );
    assert.doesNotMatch(half.out, /\n\s+at /);
    const clear = await launch(
      'api',
      secured({
        TEMPORAL_TLS: 'false',
        TEMPORAL_TLS_CLIENT_CERT_PATH: '',
        TEMPORAL_TLS_CLIENT_KEY_PATH: '',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: '',
        TEMPORAL_TLS_SERVER_NAME: '',
      }),
    );
    assert.equal(clear.code, 1);
    assert.match(
      clear.out,
      /\[svc-api\] TEMPORAL_API_KEY is set but TEMPORAL_TLS is false: the API key would be sent in clear text/,
    );
    assert.ok(!clear.out.includes(API_KEY) && !half.out.includes(API_KEY), 'the API key was printed');
  } finally {
    await db.drop();
  }
});
