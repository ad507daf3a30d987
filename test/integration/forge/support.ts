// Shared setup of the forge integration tests: a migrated test database (SQLite, or PostgreSQL when
// DATABASE_URL is set), a LocalForge on a temp data dir, and temp project repositories.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { upgrade } from '../../../migrations/runner.ts';
import { LocalForge, type LocalForgeOptions } from '../../../services/forge/local-forge.ts';
import { makeGitRepo, type TempRepo } from '../../fixtures/git-repo.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

export interface ForgeFixture {
  testDb: TestDatabase;
  database: DatabaseHandle;
  forge: LocalForge;
  /** A new temp project repository (cleaned up by close()). */
  project(files: Record<string, string>): TempRepo;
  /** A fresh path under the forge's worktree root. */
  wtPath(label: string): string;
  close(): Promise<void>;
}

export async function startForge(opts: Partial<LocalForgeOptions> = {}): Promise<ForgeFixture> {
  const testDb = await createTestDatabase();
  const database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(database, 'head');
  const forge = new LocalForge({ dataDir: testDb.dataDir, database, ...opts });
  const projectsRoot = mkdtempSync(path.join(os.tmpdir(), 'svc-forge-projects-'));
  let n = 0;
  return {
    testDb,
    database,
    forge,
    project: (files) => makeGitRepo(files, { root: path.join(projectsRoot, `p${++n}`) }),
    wtPath: (label) => path.join(forge.worktreeRoot, `${label}-${++n}`),
    async close() {
      await database.close();
      await testDb.drop();
      rmSync(projectsRoot, { recursive: true, force: true });
    },
  };
}
