// The ordered migration history. Add a file under versions/ and list it here; never edit a released one.
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import * as schema from '../db/schema/index.ts';
import type { Migration } from './migration.ts';
import baseline from './versions/0001_baseline.ts';
import remoteWorkspace from './versions/0002_remote_workspace.ts';
import remoteRuntime from './versions/0003_remote_runtime.ts';
import proxyTokens from './versions/0004_proxy_tokens.ts';
import autonomous from './versions/0005_autonomous_workflows.ts';
import remoteOutputDedupe from './versions/0007_remote_output_dedupe.ts';

const later: Migration[] = [remoteWorkspace, remoteRuntime, proxyTokens, autonomous, remoteOutputDedupe];
const claimed = new Set(later.flatMap((m) => m.creates ?? []));
const allTables = (Object.values(schema) as PgTable[]).filter((v) => getTableConfig(v).name !== undefined);

export const MIGRATIONS: Migration[] = [
  { ...baseline, creates: allTables.filter((t) => !claimed.has(t)) },
  ...later,
];
export const HEAD = MIGRATIONS[MIGRATIONS.length - 1]!.id;
/**
 * Oldest revision this build of the application runs against. Code reads every table up to head, so
 * the window is [MIN_COMPATIBLE, HEAD]; a revision this build does not know is "too new".
 */
export const MIN_COMPATIBLE = HEAD;
