// A fresh database per test file: a temp SQLite file, or a new PostgreSQL database when DATABASE_URL
// points at a server (CI runs the suite both ways).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  dialect: 'sqlite' | 'postgres';
  /** DATABASE_URL for this test database (postgres) or undefined (sqlite). */
  databaseUrl?: string;
  sqlitePath: string;
  dataDir: string;
  drop(): Promise<void>;
}

export const usingPostgres = () => /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');

export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const sqlitePath = path.join(dataDir, 'svc.sqlite');
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
  await client.query(`CREATE DATABASE ${name}`);
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
