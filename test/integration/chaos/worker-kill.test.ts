// Chaos (b): kill -9 of the worker process (a separate `bin/worker.ts`) while one autonomous workflow is
// in development (its agent mid-step), another in merge (its CI mid-run), the agent streams output and
// receives chats and the uploader sends batches. A new worker picks everything up: the workflows resume
// at their persisted phase and complete with each milestone once, the remote session's workflow still
// answers its lifecycle update, and nothing acknowledged is lost or done twice (./invariants.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { temporalAddress } from '../../support/harness.ts';
import { api } from '../../support/session.ts';
import { WORKER_KILL } from '../autonomous/workflow-support.ts';
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

let testDb: TestDatabase;
let cluster: Cluster;
let world: World | undefined;
let auto: AutonomousLoad | undefined;

before(async () => {
  testDb = await createTestDatabase();
  cluster = await startCluster({
    databaseUrl: testDb.databaseUrl,
    dataDir: testDb.dataDir,
    temporalAddress: temporalAddress(),
    env: WORKER_KILL, // the killed worker's activities run again after 8 s, not 15 s / 20 s
  });
  await cluster.start('worker');
  await cluster.start('api');
  await cluster.ready();
  world = await prepareWorld(cluster);
  auto = await startAutonomousLoad(cluster, world.tenantId, testDb.dataDir);
});
after(async () => {
  await auto?.close();
  await world?.agent.stop();
  await cluster?.close();
  await testDb?.drop();
});

test('kill -9 of the worker mid-development and mid-merge: workflows resume, nothing lost or doubled', async () => {
  await auto!.held();
  const w = runWorkload(world!, { chats: 30, batches: 30, batchSize: 50 });
  await reachProgress(w, 5);
  await cluster.kill('worker');
  auto!.release();
  // The workload goes on without a worker (chats and uploads never wait on a workflow).
  await reachProgress(w, 15);
  await cluster.start('worker');
  await w.done;
  const seen = await observe(world!, w.ledger);
  assert.deepEqual(violations(w.ledger, seen), []);
  assert.deepEqual(await auto!.finished(150_000), []);
  // The remote session's workflow answers its lifecycle update on the new worker.
  const stopped = await api(cluster.url, 'POST', `/api/remote/sessions/${world!.sessionId}/stop`, {
    auth: world!.user.session,
  });
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  assert.equal(stopped.body.status, 'stopped');
});
