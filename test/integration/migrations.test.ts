// Migrations on the active dialect: up to head, down to base, up again with the schema compared; the
// live schema (applied from the frozen SQL) matches the drizzle definitions, so drift between the frozen
// files and db/schema fails here; the runner applies the files as they are; re-running is harmless;
// concurrent runners do not race.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { type DatabaseHandle, openDatabase } from '../../db/client.ts';
import * as schema from '../../db/schema/index.ts';
import { columnsOf } from '../../migrations/ddl.ts';
import { frozenName, SQL_DIR } from '../../migrations/frozen.ts';
import { HEAD, MIGRATIONS, MIN_COMPATIBLE } from '../../migrations/index.ts';
import { introspect } from '../../migrations/introspect.ts';
import { BASE, checkCompatibility, currentRevision, downgrade, upgrade } from '../../migrations/runner.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let testDb: TestDatabase;
let db: DatabaseHandle;
const open = () => openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });

before(async () => {
  testDb = await createTestDatabase();
  db = await open();
});
after(async () => {
  await db.close();
  await testDb.drop();
});

test('up to head, down to base, up again yields the same schema', async () => {
  assert.equal(await currentRevision(db.sql), BASE);
  const applied = await upgrade(db, 'head');
  assert.deepEqual(
    applied,
    MIGRATIONS.map((m) => m.id),
  );
  assert.equal(await currentRevision(db.sql), HEAD);
  const first = await introspect(db.sql);
  assert.ok(first.views.includes('session_stats'), 'session_stats view exists');

  const down = await downgrade(db, BASE);
  assert.deepEqual(down, MIGRATIONS.map((m) => m.id).reverse());
  const empty = await introspect(db.sql);
  assert.deepEqual(Object.keys(empty.tables), ['schema_migrations']);
  assert.deepEqual(empty.views, []);

  await upgrade(db, 'head');
  assert.deepEqual(await introspect(db.sql), first);
});

test('the live schema has exactly the tables and columns of db/schema', async () => {
  await upgrade(db, 'head');
  const live = await introspect(db.sql);
  const tables = Object.values(schema) as PgTable[];
  const expected = Object.fromEntries(
    tables.map((t) => [
      getTableConfig(t).name,
      columnsOf(t)
        .map((c) => c.name)
        .sort(),
    ]),
  );
  const actual = Object.fromEntries(
    Object.entries(live.tables)
      .filter(([name]) => name !== 'schema_migrations')
      .map(([name, t]) => [name, t.columns.map((c) => c.name).sort()]),
  );
  assert.deepEqual(actual, expected);
  for (const t of tables) {
    const liveCols = new Map(live.tables[getTableConfig(t).name]!.columns.map((c) => [c.name, c]));
    for (const c of columnsOf(t))
      assert.equal(
        liveCols.get(c.name)!.notNull,
        c.notNull || c.primary,
        `${getTableConfig(t).name}.${c.name} nullability`,
      );
  }
  const indexes = (t: PgTable) => getTableConfig(t).indexes.map((ix) => ix.config.name!);
  assert.deepEqual(
    Object.fromEntries(tables.map((t) => [getTableConfig(t).name, indexes(t).sort()])),
    Object.fromEntries(
      tables.map((t) => [getTableConfig(t).name, [...live.tables[getTableConfig(t).name]!.indexes].sort()]),
    ),
    'indexes match the definitions',
  );
});

test('the runner applies the frozen SQL files as they are, not the table definitions', async () => {
  await downgrade(db, BASE);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'frozen-copy-'));
  try {
    cpSync(SQL_DIR, dir, { recursive: true });
    appendFileSync(
      path.join(dir, frozenName(db.dialect, '0003_remote_runtime', 'up')),
      '\nALTER TABLE "remote_runtime_commands" ADD COLUMN "frozen_probe" TEXT;\n',
    );
    const plan = { migrations: MIGRATIONS, sqlDir: dir };
    await upgrade(db, 'head', undefined, plan);
    const cols = (await introspect(db.sql)).tables.remote_runtime_commands!.columns.map((c) => c.name);
    assert.ok(cols.includes('frozen_probe'), 'a column only the frozen file names was created');
    await downgrade(db, BASE, undefined, plan);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await upgrade(db, 'head');
  const cols = (await introspect(db.sql)).tables.remote_runtime_commands!.columns.map((c) => c.name);
  assert.ok(!cols.includes('frozen_probe'));
});

test('each applied revision records its kind and window; a history from the previous runner gains them', async () => {
  await upgrade(db, 'head');
  const rows = await db.sql.query<{ version: string; kind: string; min_compatible: string }>(
    'SELECT version, kind, min_compatible FROM schema_migrations WHERE version = ?',
    [HEAD],
  );
  assert.deepEqual(
    { ...rows[0] },
    { version: HEAD, kind: MIGRATIONS.at(-1)!.kind, min_compatible: MIN_COMPATIBLE },
  );
  // The previous runner's history table had only (version, applied_at).
  await db.sql.exec('ALTER TABLE schema_migrations DROP COLUMN kind');
  await db.sql.exec('ALTER TABLE schema_migrations DROP COLUMN min_compatible');
  assert.equal((await checkCompatibility(db.sql)).compatible, true);
  assert.deepEqual(await upgrade(db, 'head'), []);
  const again = await db.sql.query<{ version: string; kind: string; min_compatible: string }>(
    'SELECT version, kind, min_compatible FROM schema_migrations WHERE version = ?',
    [HEAD],
  );
  assert.deepEqual({ ...again[0] }, { ...rows[0] });
});

test('remote-workspace history: downgrading 0002 removes its tables and agent_sessions columns', async () => {
  await upgrade(db, 'head');
  await downgrade(db, '0001_baseline');
  const live = await introspect(db.sql);
  for (const gone of [
    'remote_machines',
    'machine_assignments',
    'api_key_store',
    'remote_runtime_commands',
    'remote_runtime_outputs',
  ])
    assert.ok(!live.tables[gone], `${gone} dropped`);
  const cols = live.tables.agent_sessions!.columns.map((c) => c.name);
  assert.ok(!cols.includes('workspace_type') && !cols.includes('remote_machine_id'));
  await upgrade(db, '0002');
  const mid = await introspect(db.sql);
  assert.ok(
    mid.tables.remote_machines && !mid.tables.remote_runtime_commands,
    '0002 alone creates machines, not the queue',
  );
  assert.ok(mid.tables.agent_sessions!.columns.some((c) => c.name === 'workspace_type'));
  await upgrade(db, 'head');
});

test('one-step downgrade, and re-running a migration is harmless', async () => {
  await upgrade(db, 'head');
  const before = await introspect(db.sql);
  assert.deepEqual(await downgrade(db), [HEAD]);
  assert.equal(await currentRevision(db.sql), MIGRATIONS.at(-2)!.id);
  await upgrade(db, 'head');
  assert.deepEqual(await upgrade(db, 'head'), [], 'nothing to do at head');
  // Forget that 0003 ran and run it again over existing tables: guarded DDL must not fail.
  await db.sql.query(`DELETE FROM schema_migrations WHERE version = ?`, ['0003_remote_runtime']);
  assert.deepEqual(await upgrade(db, 'head'), ['0003_remote_runtime']);
  assert.deepEqual(await introspect(db.sql), before);
  // Seeds are not duplicated by a re-run of the baseline either.
  await db.sql.query(`DELETE FROM schema_migrations WHERE version = ?`, ['0001_baseline']);
  await upgrade(db, 'head');
  const tenants = await db.sql.query<{ n: number }>(`SELECT COUNT(*) AS n FROM tenants`);
  assert.equal(Number(tenants[0]!.n), 1);
});

test('concurrent runners (separate processes) apply each revision once', async () => {
  await downgrade(db, BASE);
  const run = () =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'migrations/cli.ts', 'upgrade', 'head'], {
        env: { ...process.env, SVC_DATA_DIR: testDb.dataDir, DATABASE_URL: testDb.databaseUrl ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (b) => (out += b));
      child.stderr.on('data', (b) => (out += b));
      child.on('exit', (code) =>
        code === 0 ? resolve(out) : reject(new Error(`migrate exited ${code}: ${out}`)),
      );
    });
  const outputs = await Promise.all([run(), run(), run()]);
  const applied = outputs.flatMap((o) => [...o.matchAll(/upgraded to (\S+):/g)].map((m) => m[1]!)).sort();
  assert.deepEqual(
    applied,
    MIGRATIONS.map((m) => m.id).sort(),
    'every revision applied exactly once across runners',
  );
  assert.equal((await checkCompatibility(db.sql)).compatible, true);
});

test('compatibility window: too old and too new are refused with the command to run', async () => {
  await upgrade(db, 'head');
  await downgrade(db);
  const old = await checkCompatibility(db.sql);
  assert.equal(old.compatible, false);
  assert.equal(old.reason, 'too_old');
  assert.match(old.message!, /npm run migrate -- upgrade head/);
  assert.match(old.message!, new RegExp(MIGRATIONS.at(-2)!.id));
  await upgrade(db, 'head');
  await db.sql.query(`INSERT INTO schema_migrations (version) VALUES (?)`, ['9999_from_the_future']);
  const fresh = await checkCompatibility(db.sql);
  assert.equal(fresh.compatible, false);
  assert.equal(fresh.reason, 'too_new');
  assert.equal(fresh.current, '9999_from_the_future');
  await db.sql.query(`DELETE FROM schema_migrations WHERE version = ?`, ['9999_from_the_future']);
  assert.equal((await checkCompatibility(db.sql)).compatible, true);
});

test('0040 gives earlier remote sessions a CLI start when they show they ran, and none otherwise', async () => {
  await upgrade(db, 'head');
  const at = MIGRATIONS.findIndex((m) => m.id === '0040_session_cli_started');
  await downgrade(db, MIGRATIONS[at - 1]!.id);
  const session = (id: string, messages: number) =>
    db.sql.query(
      `INSERT INTO agent_sessions (session_id, tool_name, workspace_type, status, message_count)
       VALUES (?, 'claude', 'remote', 'completed', ?)`,
      [id, messages],
    );
  await session('m40-talked', 3);
  await session('m40-running', 0);
  await session('m40-refused', 0);
  await db.sql.query(
    `INSERT INTO remote_runtime_outputs (session_id, event_index, stream, payload) VALUES (?, 1, 'system', ?)`,
    [
      'm40-running',
      JSON.stringify({
        data: JSON.stringify({ type: 'agent', event: 'started', message: 'CLI started (pid 42)' }),
      }),
    ],
  );
  await upgrade(db, 'head');
  const rows = await db.sql.query<{ session_id: string; started: unknown }>(
    `SELECT session_id, cli_started_at AS started FROM agent_sessions WHERE session_id LIKE 'm40-%' ORDER BY session_id`,
  );
  assert.deepEqual(
    rows.map((r) => [r.session_id, r.started != null]),
    [
      ['m40-refused', false],
      ['m40-running', true],
      ['m40-talked', true],
    ],
  );
  await db.sql.query(`DELETE FROM remote_runtime_outputs WHERE session_id LIKE 'm40-%'`);
  await db.sql.query(`DELETE FROM agent_sessions WHERE session_id LIKE 'm40-%'`);
});

test('0041 carries read alerts over: own ones for their user, tenant-wide ones for the administrators', async () => {
  await upgrade(db, 'head');
  const at = MIGRATIONS.findIndex((m) => m.id === '0041_alert_reads');
  await downgrade(db, MIGRATIONS[at - 1]!.id);
  const user = async (name: string, role: string, tenant: number | null) => {
    const [r] = await db.sql.query<{ id: unknown }>(
      `INSERT INTO users (username, password_hash, role, tenant_id) VALUES (?, 'x', ?, ?) RETURNING id`,
      [name, role, tenant],
    );
    return Number(r!.id);
  };
  const tenant = async (name: string) => {
    const [r] = await db.sql.query<{ id: unknown }>('INSERT INTO tenants (name) VALUES (?) RETURNING id', [
      name,
    ]);
    return Number(r!.id);
  };
  const t1 = await tenant('m41-t1');
  const t2 = await tenant('m41-t2');
  const owner = await user('m41-owner', 'user', t1);
  const tenantAdmin = await user('m41-tadmin', 'tenant_admin', t1);
  const otherAdmin = await user('m41-other', 'tenant_admin', t2);
  const system = await user('m41-system', 'platform_admin', null);
  const alert = async (id: string, userId: number | null, read: boolean) =>
    db.sql.query(
      `INSERT INTO alerts (alert_id, alert_type, severity, title, user_id, tenant_id, read)
       VALUES (?, 'security', 'warning', 't', ?, ?, ?)`,
      [id, userId, t1, read],
    );
  await alert('m41-own-read', owner, true);
  await alert('m41-own-unread', owner, false);
  await alert('m41-wide-read', null, true);
  await upgrade(db, 'head');
  const rows = await db.sql.query<{ alert_id: string; user_id: unknown }>(
    `SELECT a.alert_id, r.user_id FROM alert_reads r JOIN alerts a ON a.id = r.alert_id
     WHERE a.alert_id LIKE 'm41-%' ORDER BY a.alert_id, r.user_id`,
  );
  assert.deepEqual(
    rows.map((r) => [r.alert_id, Number(r.user_id)]),
    [
      ['m41-own-read', owner],
      ...[tenantAdmin, system].sort((a, b) => a - b).map((u) => ['m41-wide-read', u]),
    ],
  );
  assert.ok(!rows.some((r) => Number(r.user_id) === otherAdmin), "another tenant's admin gets no mark");
  await db.sql.query(`DELETE FROM alerts WHERE alert_id LIKE 'm41-%'`);
  await db.sql.query(`DELETE FROM users WHERE username LIKE 'm41-%'`);
  await db.sql.query(`DELETE FROM tenants WHERE name LIKE 'm41-%'`);
});
