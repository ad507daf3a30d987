// Chaos (d): kill -9 of the PostgreSQL postmaster (a private cluster, test/support/private-postgres.ts,
// never the shared test server) while the agent streams output and receives chats and the uploader sends
// batches; the server starts again (crash recovery) on the same port, the API's pool reconnects, and
// nothing acknowledged is lost or done twice (./invariants.ts). PostgreSQL only: on SQLite the database
// is a file inside the API process, so there is no server to kill (scenario (a) kills that process).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { usingPostgres } from '../../support/database.ts';
import { temporalAddress } from '../../support/harness.ts';
import { createPrivatePostgres, type PrivatePostgres } from '../../support/private-postgres.ts';
import { sleep, waitUntil } from '../../support/remote.ts';
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

const SKIP = usingPostgres()
  ? false
  : 'PostgreSQL only (DATABASE_URL unset): SQLite has no server process to kill; scenario (a) kills the API that holds the file';

let server: PrivatePostgres | undefined;
let cluster: Cluster | undefined;
let world: World | undefined;

before(async () => {
  if (SKIP) {
    console.log(`# chaos (d) skipped: ${SKIP}`);
    return;
  }
  server = await createPrivatePostgres();
  cluster = await startCluster({ databaseUrl: server.url, temporalAddress: temporalAddress() });
  await cluster.start('worker');
  await cluster.start('api');
  await cluster.ready();
  world = await prepareWorld(cluster);
});
after(async () => {
  await world?.agent.stop();
  await cluster?.close();
  server?.destroy();
});

/** The postmaster's pid, from postmaster.pid in the server's data directory. */
async function postmasterPid(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query('SHOW data_directory');
    return Number(readFileSync(path.join(rows[0].data_directory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } finally {
    await c.end();
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('kill -9 of PostgreSQL mid-stream: acknowledged chats, outputs and uploads are kept once', {
  skip: SKIP,
}, async () => {
  const pid = await postmasterPid(server!.url);
  const w = runWorkload(world!, { chats: 40, batches: 40, batchSize: 50 });
  await reachProgress(w, 10);
  assert.ok(w.ledger.messagesAcked.size < 40 * 50, 'uploads are still running at the kill');
  process.kill(pid, 'SIGKILL');
  await waitUntil('the postmaster gone', async () => !alive(pid), 10_000);
  await waitUntil(
    'a failed chat and a failed upload',
    async () => w.ledger.chatsUnacked.length > 0 && w.ledger.uploadFailures > 0,
    30_000,
  );
  // The orphaned backends notice the postmaster's death and exit; until then the restart is refused
  // (their shared memory is still attached).
  await waitUntil(
    'PostgreSQL started again',
    async () => {
      try {
        server!.start();
        return true;
      } catch {
        await sleep(200);
        return false;
      }
    },
    30_000,
  );
  for (const c of ['api', 'worker'] as const) {
    const p = cluster!.procs[c]!;
    assert.ok(
      p.child.exitCode === null && p.child.signalCode === null,
      `the ${c} outlived the outage (exit ${p.child.exitCode}): ${p.output().slice(-3000)}`,
    );
  }
  await withTimeout(w.done, 90_000, () => `the workload did not finish: ${JSON.stringify(w.ledger)}`);
  const seen = await observe(world!, w.ledger);
  assert.deepEqual(violations(w.ledger, seen), []);
  await cluster!.ready();
  console.log(
    `# postgres kill: ${w.ledger.chatsAcked.length} chats acked, ${w.ledger.chatsUnacked.length} refused; ` +
      `${w.ledger.uploadAttempts} upload attempts, ${w.ledger.uploadFailures} failed`,
  );
});
