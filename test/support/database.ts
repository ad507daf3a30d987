// A fresh database per test file: a temp SQLite file, or a new PostgreSQL database when DATABASE_URL
// points at a server (CI runs the suite both ways).
//
// `npm test` migrates one template database to head at its start (prepareMigratedTemplate, below) and a
// file asking for a migrated database gets a copy of it: a file copy on SQLite, CREATE DATABASE ...
// TEMPLATE on PostgreSQL. Migrating from scratch took about 0.7 s (SQLite) and 3 s (PostgreSQL) per
// test file on a loaded 2-core machine; the copy takes a fraction of that. Files that test the
// migrations themselves ask for an empty database (the default).
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../db/client.ts';
import { upgrade } from '../../migrations/runner.ts';

/** Where the template is, handed from `npm test` (test/run.ts) to the test processes. */
const SQLITE_TEMPLATE = 'SVC_TEST_SQLITE_TEMPLATE';
const PG_TEMPLATE = 'SVC_TEST_PG_TEMPLATE';

export interface TestDatabase {
  dialect: 'sqlite' | 'postgres';
  /** DATABASE_URL for this test database (postgres) or undefined (sqlite). */
  databaseUrl?: string;
  sqlitePath: string;
  dataDir: string;
  drop(): Promise<void>;
}

export const usingPostgres = () => /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');

/**
 * A new, empty test database; `migrated: true` gives one already at head (a copy of the run's template
 * when `npm test` made one, else empty: the caller's own upgrade then migrates it).
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const sqlitePath = path.join(dataDir, 'svc.sqlite');
  const sqliteTemplate = process.env[SQLITE_TEMPLATE];
  if (!usingPostgres() && opts.migrated && sqliteTemplate && existsSync(sqliteTemplate))
    copyFileSync(sqliteTemplate, sqlitePath);
  if (!usingPostgres())
    return {
      dialect: 'sqlite',
      sqlitePath,
      dataDir,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  const admin = new URL(process.env.DATABASE_URL!);
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const template = opts.migrated ? process.env[PG_TEMPLATE] : undefined;
  await client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  await client.end();
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  return {
    dialect: 'postgres',
    databaseUrl: url.toString(),
    sqlitePath,
    dataDir,
    async drop() {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Migrates one template database to head for the whole run and returns the environment that hands it
 * to the test processes, and how to drop it. Called once by `npm test` before the files start.
 */
export async function prepareMigratedTemplate(
  dir: string,
): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (!usingPostgres()) {
    const sqlitePath = path.join(dir, 'template.sqlite');
    const db = await openDatabase({ databaseUrl: '', sqlitePath });
    await upgrade(db, 'head');
    await db.close();
    return { env: { [SQLITE_TEMPLATE]: sqlitePath }, drop: async () => rmSync(sqlitePath, { force: true }) };
  }
  const admin = new URL(process.env.DATABASE_URL!);
  const name = `svc_test_template_${randomBytes(6).toString('hex')}`;
  const query = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await query(`CREATE DATABASE ${name}`);
  const url = new URL(admin.toString());
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), sqlitePath: '' });
  await upgrade(db, 'head');
  // No connection may stay open on a template, or CREATE DATABASE ... TEMPLATE refuses it.
  await db.close();
  return { env: { [PG_TEMPLATE]: name }, drop: () => query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
