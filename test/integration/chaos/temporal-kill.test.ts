// Chaos (c): kill -9 of the Temporal dev server (its own server here, persisted with --db-filename, so a
// restart keeps every history) while one autonomous workflow is in development (its agent mid-step) and
// another in merge (its CI mid-run), the agent streams output and receives chats and the uploader sends
// batches. The server starts again on the same port; the API and the worker reconnect by themselves,
// the workflows complete from their persisted phase with each milestone once, the remote session's
// workflow answers its lifecycle update, and nothing acknowledged is lost or done twice.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type DevServer, freePort, startDevServer } from '../../../bin/temporal-dev.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { api } from '../../support/session.ts';
import { type AutonomousLoad, startAutonomousLoad } from './autonomous.ts';
import { violations } from './invariants.ts';
import {
  type Cluster,
  observe,
  prepareWorld,
  reachProgress,
  runWorkload,
  startCluster,
  type World,
} from './support.ts';

const cliPath = process.env.TEMPORAL_CLI_PATH ?? 'temporal';
const temporalDir = mkdtempSync(path.join(os.tmpdir(), 'svc-chaos-temporal-'));
let dev: DevServer | undefined;
let testDb: TestDatabase;
let cluster: Cluster;
let world: World | undefined;
let auto: AutonomousLoad | undefined;

before(async () => {
  dev = await startDevServer({ cliPath, dataDir: temporalDir, ephemeralPorts: true });
  testDb = await createTestDatabase();
  cluster = await startCluster({
    databaseUrl: testDb.databaseUrl,
    dataDir: testDb.dataDir,
    temporalAddress: dev.address,
  });
  await cluster.start('worker');
  await cluster.start('api');
  await cluster.ready();
  world = await prepareWorld(cluster);
  auto = await startAutonomousLoad(cluster, world.tenantId, testDb.dataDir, 'temporal');
});
after(async () => {
  await auto?.close();
  await world?.agent.stop();
  await cluster?.close();
  await dev?.stop();
  await testDb?.drop();
  rmSync(temporalDir, { recursive: true, force: true });
});

test('kill -9 of the Temporal server mid-development and mid-merge: workflows resume, nothing lost or doubled', async () => {
  await auto!.held();
  const w = runWorkload(world!, { chats: 30, batches: 30, batchSize: 50 });
  await reachProgress(w, 5);
  const port = Number(dev!.address.split(':').pop());
  const killed = dev!.child;
  const gone = new Promise((r) => killed.once('exit', r));
  process.kill(-killed.pid!, 'SIGKILL');
  await gone;
  // Chats and uploads never wait on Temporal: the workload goes on while the server is down.
  await reachProgress(w, 15);
  dev = await startDevServer({
    cliPath,
    dataDir: temporalDir,
    config: { port, ui_port: await freePort() },
  });
  auto!.release();
  await w.done;
  const seen = await observe(world!, w.ledger);
  assert.deepEqual(violations(w.ledger, seen), []);
  assert.deepEqual(await auto!.finished(150_000), []);
  for (const c of ['api', 'worker'] as const) {
    const p = cluster.procs[c]!;
    assert.ok(
      p.child.exitCode === null && p.child.signalCode === null,
      `the ${c} outlived the outage (exit ${p.child.exitCode}): ${p.output().slice(-3000)}`,
    );
  }
  const stopped = await api(cluster.url, 'POST', `/api/remote/sessions/${world!.sessionId}/stop`, {
    auth: world!.user.session,
  });
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  assert.equal(stopped.body.status, 'stopped');
});
