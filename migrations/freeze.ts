// `npm run migrate -- freeze <revision>...`: renders a migration's TypeScript description with today's
// renderer (ddl.ts) into SQL files per dialect, once. The only caller of the renderer: the runner never
// renders, it applies the files this writes. An existing file is never overwritten without `force`, and
// never at all for a revision CHANGELOG.md lists under a released version.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type { Dialect, RawSql } from '../db/client.ts';
import { readChangelog, releasedRevisions } from './changelog.ts';
import { addColumnSql, createTableSql, dropColumnSql, dropTableSql } from './ddl.ts';
import {
  checksum,
  DIALECTS,
  type Direction,
  formatStatements,
  frozenName,
  MANIFEST_NAME,
  parseStatements,
  readManifest,
  SQL_DIR,
} from './frozen.ts';
import type { Migration } from './migration.ts';

/** Tables in creation order (referenced tables first), since PostgreSQL checks references at CREATE. */
function topoSort(tables: PgTable[]): PgTable[] {
  const names = new Map(tables.map((t) => [getTableConfig(t).name, t]));
  const out: PgTable[] = [];
  const seen = new Set<string>();
  const visit = (t: PgTable) => {
    const name = getTableConfig(t).name;
    if (seen.has(name)) return;
    seen.add(name);
    for (const fk of getTableConfig(t).foreignKeys) {
      const dep = names.get(getTableConfig(fk.reference().foreignTable).name);
      if (dep && dep !== t) visit(dep);
    }
    out.push(t);
  };
  tables.forEach(visit);
  return out;
}

/** Column names of `table` that a migration after `index` adds (so the creator leaves them out). */
function addedLater(migrations: readonly Migration[], table: PgTable, index: number): Set<string> {
  const out = new Set<string>();
  for (const m of migrations.slice(index + 1))
    for (const [t, cols] of m.addsColumns ?? []) if (t === table) for (const c of cols) out.add(c.name);
  return out;
}

/** Runs an up/down hook against a recorder: its `sql.exec` statements become frozen SQL. */
async function record(m: Migration, hook: Migration['up'], dialect: Dialect): Promise<string[]> {
  const out: string[] = [];
  const recorder: RawSql = {
    dialect,
    exec: async (s) => void out.push(s.trim().replace(/;$/, '')),
    query: async () => {
      throw new Error(
        `${m.id}: up/down may only call sql.exec with literal SQL (it is frozen); move data logic that needs sql.query to \`data\``,
      );
    },
  };
  await hook?.(recorder);
  return out;
}

export async function renderMigration(
  migrations: readonly Migration[],
  index: number,
  dialect: Dialect,
): Promise<Record<Direction, string[]>> {
  const m = migrations[index]!;
  const tables = topoSort(m.creates ?? []);
  const up = tables.flatMap((t) => createTableSql(t, dialect, addedLater(migrations, t, index)));
  for (const [table, cols] of m.addsColumns ?? [])
    for (const col of cols) up.push(addColumnSql(table, col, dialect));
  up.push(...(await record(m, m.up, dialect)));
  const down = await record(m, m.down, dialect);
  for (const [table, cols] of m.addsColumns ?? [])
    for (const col of cols) down.push(dropColumnSql(table, col));
  down.push(...tables.reverse().map(dropTableSql));
  return { up, down };
}

export interface FreezeOptions {
  force?: boolean;
  sqlDir?: string;
  /** Revisions that must never be re-frozen; default: those CHANGELOG.md lists under a release. */
  released?: Set<string>;
  log?: (line: string) => void;
}

/** Writes the frozen files of each named revision (`pending` = every revision without them). */
export async function freeze(
  migrations: readonly Migration[],
  targets: string[],
  opts: FreezeOptions = {},
): Promise<string[]> {
  const sqlDir = opts.sqlDir ?? SQL_DIR;
  const released = opts.released ?? releasedRevisions(readChangelog());
  const log = opts.log ?? (() => {});
  const isFrozen = (id: string) =>
    DIALECTS.some((d) =>
      (['up', 'down'] as const).some((dir) => existsSync(path.join(sqlDir, frozenName(d, id, dir)))),
    );
  const ids = targets.flatMap((t) =>
    t === 'pending'
      ? migrations.filter((m) => !isFrozen(m.id)).map((m) => m.id)
      : [
          migrations.find((m) => m.id === t || m.id.split('_')[0] === t)?.id ??
            (() => {
              throw new Error(`Unknown revision "${t}". Known: ${migrations.map((m) => m.id).join(', ')}`);
            })(),
        ],
  );
  const manifest = readManifest(sqlDir);
  for (const id of ids) {
    if (isFrozen(id) && released.has(id))
      throw new Error(`${id} is released (CHANGELOG.md); its frozen SQL never changes. Add a new migration.`);
    if (isFrozen(id) && !opts.force)
      throw new Error(`${id} is already frozen; pass --force to re-render it (only before it is released)`);
    const index = migrations.findIndex((m) => m.id === id);
    for (const dialect of DIALECTS) {
      const rendered = await renderMigration(migrations, index, dialect);
      for (const direction of ['up', 'down'] as const) {
        const name = frozenName(dialect, id, direction);
        const text = formatStatements(
          [
            `${id} (${dialect}, ${direction}): frozen by \`npm run migrate -- freeze ${id}\`.`,
            'Applied as-is by the runner. Never edit a released file; add a new migration instead.',
          ],
          rendered[direction],
        );
        if (JSON.stringify(parseStatements(text)) !== JSON.stringify(rendered[direction]))
          throw new Error(`${name}: a statement does not survive the round trip; give each its own sql.exec`);
        mkdirSync(path.dirname(path.join(sqlDir, name)), { recursive: true });
        writeFileSync(path.join(sqlDir, name), text);
        manifest[name] = checksum(text);
      }
    }
    log(`froze ${id}`);
  }
  const sorted = Object.fromEntries(Object.entries(manifest).sort(([a], [b]) => a.localeCompare(b)));
  mkdirSync(sqlDir, { recursive: true });
  writeFileSync(path.join(sqlDir, MANIFEST_NAME), `${JSON.stringify(sorted, null, 2)}\n`);
  return ids;
}
