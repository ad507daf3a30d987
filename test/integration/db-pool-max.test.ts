// SVC_DB_POOL_MAX: the most PostgreSQL connections one process opens (db/client.ts), applied where the
// entry points open the database (bin/runtime.ts prepareDatabase: npm start, npm run api, npm run
// worker). On PostgreSQL the pool is driven past the limit with real queries and never opens more.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { prepareDatabase } from '../../bin/startup.ts';
import { loadSettings, SettingsError } from '../../config/settings.ts';
import { DEFAULT_POOL_MAX } from '../../db/client.ts';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../support/database.ts';

const dbs: TestDatabase[] = [];
after(async () => {
  for (const d of dbs) await d.drop();
});

test('SVC_DB_POOL_MAX: default 10, a whole number from 1 to 1000', () => {
  assert.equal(loadSettings({}).SVC_DB_POOL_MAX, DEFAULT_POOL_MAX);
  assert.equal(DEFAULT_POOL_MAX, 10);
  assert.equal(loadSettings({ SVC_DB_POOL_MAX: '40' }).SVC_DB_POOL_MAX, 40);
  for (const bad of ['0', '-1', '2.5', 'many', '1001'])
    assert.throws(() => loadSettings({ SVC_DB_POOL_MAX: bad }), SettingsError, bad);
});

test('the pool an entry point opens holds at most SVC_DB_POOL_MAX connections under load', {
  skip: !usingPostgres() && 'PostgreSQL only (DATABASE_URL): SQLite has one connection',
}, async () => {
  const testDb = await createTestDatabase();
  dbs.push(testDb);
  const base = { SVC_DATA_DIR: testDb.dataDir, DATABASE_URL: testDb.databaseUrl! };
  const log = () => undefined;
  const limited = await prepareDatabase(loadSettings({ ...base, SVC_DB_POOL_MAX: '3' }), {
    migrate: true,
    log,
  });
  const standard = await prepareDatabase(loadSettings(base), { migrate: false, log });
  try {
    assert.equal(standard.pool!.options.max, DEFAULT_POOL_MAX);
    const pool = limited.pool!;
    assert.equal(pool.options.max, 3);
    let open = 0;
    let waiting = 0;
    let done = false;
    const queries = Promise.all(
      Array.from({ length: 8 }, () => limited.sql.query('select pg_sleep(0.2)')),
    ).finally(() => {
      done = true;
    });
    while (!done) {
      open = Math.max(open, pool.totalCount);
      waiting = Math.max(waiting, pool.waitingCount);
      await new Promise((r) => setImmediate(r));
    }
    await queries;
    assert.equal(open, 3, 'the pool opened exactly its limit');
    assert.ok(waiting >= 1, 'queries past the limit waited for a connection');
    // The server agrees: this database never saw more than 3 backends of the limited pool + 1 of ours.
    const rows = await standard.sql.query(
      'select count(*)::int as n from pg_stat_activity where datname = current_database()',
    );
    assert.ok((rows[0] as { n: number }).n <= 3 + 1, JSON.stringify(rows));
  } finally {
    await limited.close();
    await standard.close();
  }
});
