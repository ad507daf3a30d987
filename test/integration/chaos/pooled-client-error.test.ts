// The defect chaos (d) found, pinned without killing a server: a pooled PostgreSQL client lent out
// (a transaction between two statements, a streamed upload) whose backend dies emits 'error'. The pool
// only listens while a client is idle, so that event ended the whole process (API and worker died on a
// kill -9 of PostgreSQL). db/client.ts now listens on every pooled client: the process lives, the lent
// client's next query fails, and the pool hands out a working client afterwards. PostgreSQL only.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../support/database.ts';
import { waitUntil } from '../../support/remote.ts';

const SKIP = usingPostgres() ? false : 'PostgreSQL only (DATABASE_URL unset)';
let testDb: TestDatabase | undefined;
let database: DatabaseHandle | undefined;

before(async () => {
  if (SKIP) return;
  testDb = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
});
after(async () => {
  await database?.close();
  await testDb?.drop();
});

test('a lent pooled client whose backend is terminated does not end the process', {
  skip: SKIP,
}, async () => {
  const client = await database!.pool!.connect();
  let ended = false;
  client.on('end', () => {
    ended = true;
  });
  const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
  const admin = new pg.Client({ connectionString: testDb!.databaseUrl });
  await admin.connect();
  await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
  await admin.end();
  // The FATAL message arrives while no query runs on the lent client: its 'error' event must be handled.
  await waitUntil('the lent client ended', async () => ended, 10_000);
  await assert.rejects(client.query('SELECT 1'));
  client.release();
  assert.deepEqual(await database!.sql.query('SELECT 1 AS one', []), [{ one: 1 }]);
});
