// Chaos (a): kill -9 of the API process (a separate `bin/api.ts`) while the agent streams output and
// receives chats and the uploader sends batches; the API starts again on the same port, the agent and
// the uploader retry against it, and nothing acknowledged is lost or done twice (./invariants.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { temporalAddress } from '../../support/harness.ts';
import { waitUntil } from '../../support/remote.ts';
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

before(async () => {
  testDb = await createTestDatabase();
  cluster = await startCluster({
    databaseUrl: testDb.databaseUrl,
    dataDir: testDb.dataDir,
    temporalAddress: temporalAddress(),
  });
  await cluster.start('worker');
  await cluster.start('api');
  await cluster.ready();
  world = await prepareWorld(cluster);
});
after(async () => {
  await world?.agent.stop();
  await cluster?.close();
  await testDb?.drop();
});

test('kill -9 of the API mid-stream: acknowledged chats, outputs and uploads are kept once', async () => {
  const w = runWorkload(world!, { chats: 40, batches: 40, batchSize: 50 });
  await reachProgress(w, 10);
  assert.ok(w.ledger.messagesAcked.size < 40 * 50, 'uploads are still running at the kill');
  await cluster.kill('api');
  // Clients see the API gone before it comes back.
  await waitUntil(
    'a failed chat and a failed upload',
    async () => w.ledger.chatsUnacked.length > 0 && w.ledger.uploadFailures > 0,
    30_000,
  );
  await cluster.start('api');
  await w.done;
  const seen = await observe(world!, w.ledger);
  assert.deepEqual(violations(w.ledger, seen), []);
  assert.equal(seen.echoed.length >= 40, true);
  console.log(
    `# api kill: ${w.ledger.chatsAcked.length} chats acked, ${w.ledger.chatsUnacked.length} refused; ` +
      `${w.ledger.uploadAttempts} upload attempts, ${w.ledger.uploadFailures} failed`,
  );
});
