// Reads CHANGELOG.md (document 2 "Versioning" 1): `## <version>` sections, each naming the schema
// revisions it introduced in backticks; `## Unreleased` collects revisions not yet released. A revision
// listed under a version is released: its frozen SQL must never change again.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHANGELOG_PATH =
  [
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../CHANGELOG.md'),
    path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../CHANGELOG.md'),
  ].find((p) => existsSync(p)) ?? path.resolve('CHANGELOG.md');

export interface ChangelogSection {
  version: string;
  released: boolean;
  revisions: string[];
}

const REVISION = /`(\d{4}_[a-z0-9_]+)`/g;

export function parseChangelog(text: string): ChangelogSection[] {
  const out: ChangelogSection[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) {
      const version = line.slice(3).trim();
      out.push({ version, released: version.toLowerCase() !== 'unreleased', revisions: [] });
    } else if (out.length) for (const m of line.matchAll(REVISION)) out.at(-1)!.revisions.push(m[1]!);
  }
  return out;
}

export function readChangelog(file = CHANGELOG_PATH): ChangelogSection[] {
  return existsSync(file) ? parseChangelog(readFileSync(file, 'utf8')) : [];
}

export const releasedRevisions = (sections: ChangelogSection[]) =>
  new Set(sections.filter((s) => s.released).flatMap((s) => s.revisions));
