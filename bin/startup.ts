// The part of starting a process that may refuse (the database, its schema window), kept light: the
// entry points (start, api, worker) load bin/runtime.ts (the API, the worker, ~500 modules) only after
// these checks pass, so a refusal is said without first loading everything it will not run.
import type { Settings } from '../config/settings.ts';
import type { DatabaseHandle } from '../db/client.ts';

export class StartupError extends Error {}

/** Opens the database; migrates only when asked (embedded single-node start outside production). */
export async function prepareDatabase(
  settings: Settings,
  opts: { migrate: boolean; log: (l: string) => void },
): Promise<DatabaseHandle> {
  const [{ openDatabase }, { checkCompatibility, upgrade }] = await Promise.all([
    import('../db/client.ts'),
    import('../migrations/runner.ts'),
  ]);
  const database = await openDatabase({
    databaseUrl: settings.DATABASE_URL,
    sqlitePath: settings.sqlitePath,
    poolMax: settings.SVC_DB_POOL_MAX,
  });
  try {
    await database.ping();
    if (opts.migrate) await upgrade(database, 'head', (l) => opts.log(`migrate: ${l}`));
    const c = await checkCompatibility(database.sql);
    if (!c.compatible) throw new StartupError(`${c.message} (current ${c.current}, required ${c.required})`);
    return database;
  } catch (err) {
    await database.close().catch(() => undefined);
    if (err instanceof StartupError) throw err;
    throw new StartupError(`Cannot open the ${settings.dialect} database: ${(err as Error).message}`);
  }
}
