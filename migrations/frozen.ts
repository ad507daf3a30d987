// The frozen SQL artefacts: migrations/sql/<dialect>/<revision>.<up|down>.sql plus a checksum manifest
// (migrations/sql/checksums.json). The runner reads these files as-is; only `freeze` writes them.
// Format: `--` comment lines before a statement, each statement ends with `;` at the end of a line (a
// statement never has a line ending in `;` inside it; `freeze` checks that the files parse back).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Dialect } from '../db/client.ts';

export type Direction = 'up' | 'down';
export const DIALECTS: Dialect[] = ['postgres', 'sqlite'];

const here = path.dirname(fileURLToPath(import.meta.url));
/** migrations/sql next to this file (tsx), or the source tree's copy when running from dist/. */
export const SQL_DIR =
  [path.join(here, 'sql'), path.resolve(here, '../../migrations/sql')].find((d) => existsSync(d)) ??
  path.join(here, 'sql');

export const MANIFEST_NAME = 'checksums.json';

/** Path relative to the SQL directory, e.g. `postgres/0001_baseline.up.sql` (also the manifest key). */
export const frozenName = (dialect: Dialect, id: string, direction: Direction) =>
  `${dialect}/${id}.${direction}.sql`;

export const checksum = (text: string) => createHash('sha256').update(text).digest('hex');

export function readManifest(sqlDir = SQL_DIR): Record<string, string> {
  const file = path.join(sqlDir, MANIFEST_NAME);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
}

/** The statements of one frozen file; a missing file names the command that creates it. */
export function readFrozen(dialect: Dialect, id: string, direction: Direction, sqlDir = SQL_DIR): string[] {
  const file = path.join(sqlDir, frozenName(dialect, id, direction));
  if (!existsSync(file))
    throw new Error(
      `Migration ${id} has no frozen SQL (${file} is missing). Run \`npm run migrate -- freeze ${id}\` and commit migrations/sql.`,
    );
  return parseStatements(readFileSync(file, 'utf8'));
}

export function parseStatements(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  for (const line of text.split('\n')) {
    if (!current.length && (line.trim() === '' || line.startsWith('--'))) continue;
    if (line.trimEnd().endsWith(';')) {
      current.push(line.trimEnd().slice(0, -1));
      out.push(current.join('\n'));
      current = [];
    } else current.push(line);
  }
  if (current.some((l) => l.trim() !== ''))
    throw new Error(`unterminated statement (no trailing ';'): ${current.join('\n').slice(0, 200)}`);
  return out;
}

export function formatStatements(header: string[], statements: string[]): string {
  const head = header.map((l) => `-- ${l}`).join('\n');
  return `${head}\n${statements.map((s) => `\n${s};\n`).join('')}`;
}
