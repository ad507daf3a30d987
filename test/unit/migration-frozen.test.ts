// Migrations are frozen artefacts: every revision has checked-in SQL per dialect whose checksums match
// migrations/sql/checksums.json (so an edit to a released file fails here), the runner cannot reach the
// renderer, `freeze` never overwrites without --force and never re-freezes a released revision, and the
// changelog names every revision once.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { parseChangelog, readChangelog, releasedRevisions } from '../../migrations/changelog.ts';
import { freeze, renderMigration } from '../../migrations/freeze.ts';
import {
  checksum,
  DIALECTS,
  frozenName,
  MANIFEST_NAME,
  parseStatements,
  readFrozen,
  readManifest,
  SQL_DIR,
} from '../../migrations/frozen.ts';
import { MIGRATIONS } from '../../migrations/index.ts';
import { defineMigration } from '../../migrations/migration.ts';

test('every revision has frozen up/down SQL for both dialects, matching the checksum manifest', () => {
  const manifest = readManifest();
  const expected = MIGRATIONS.flatMap((m) =>
    DIALECTS.flatMap((d) => (['up', 'down'] as const).map((dir) => frozenName(d, m.id, dir))),
  ).sort();
  assert.deepEqual(Object.keys(manifest).sort(), expected, 'manifest lists exactly the frozen files');
  const onDisk = DIALECTS.flatMap((d) => readdirSync(path.join(SQL_DIR, d)).map((f) => `${d}/${f}`)).sort();
  assert.deepEqual(onDisk, expected, 'no stray or missing SQL files');
  for (const name of expected) {
    const text = readFileSync(path.join(SQL_DIR, name), 'utf8');
    assert.equal(checksum(text), manifest[name], `${name} changed after it was frozen`);
  }
});

test('unreleased revisions are frozen from their current description (re-freeze with --force after a change)', async () => {
  const released = releasedRevisions(readChangelog());
  for (const [i, m] of MIGRATIONS.entries()) {
    if (released.has(m.id)) continue;
    for (const d of DIALECTS) {
      const rendered = await renderMigration(MIGRATIONS, i, d);
      for (const dir of ['up', 'down'] as const)
        assert.deepEqual(
          readFrozen(d, m.id, dir),
          rendered[dir],
          `${frozenName(d, m.id, dir)} is stale: npm run migrate -- freeze ${m.id} --force`,
        );
    }
  }
});

test('statements parse back: comments skipped, multi-line statements kept whole', () => {
  assert.deepEqual(parseStatements('-- head\n\nCREATE TABLE "a" (\n  "x" TEXT\n);\n\nDROP INDEX "b";\n'), [
    'CREATE TABLE "a" (\n  "x" TEXT\n)',
    'DROP INDEX "b"',
  ]);
  assert.throws(() => parseStatements('SELECT 1'), /unterminated statement/);
  const baseline = parseStatements(
    readFileSync(path.join(SQL_DIR, frozenName('sqlite', '0001_baseline', 'up')), 'utf8'),
  );
  assert.ok(baseline.some((s) => s.startsWith('CREATE VIEW IF NOT EXISTS session_stats AS')));
  assert.ok(baseline.some((s) => s.startsWith('CREATE TABLE IF NOT EXISTS "users" (')));
});

/** Relative imports reachable from `file` (static `from '...'` clauses; ones naming no file are skipped). */
function reachable(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file) || !existsSync(file)) return seen;
  seen.add(file);
  for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g))
    reachable(path.resolve(path.dirname(file), m[1]!), seen);
  return seen;
}

test('the runner never reaches the renderer: it applies the frozen files only', () => {
  const graph = reachable(path.resolve('migrations/runner.ts'));
  assert.ok(graph.has(path.resolve('migrations/frozen.ts')));
  for (const renderer of ['migrations/ddl.ts', 'migrations/freeze.ts'])
    assert.ok(!graph.has(path.resolve(renderer)), `runner imports ${renderer}`);
  // The app's startup and readiness paths go through the runner too.
  for (const entry of ['bin/runtime.ts', 'api/routes/ops.ts'])
    assert.ok(!reachable(path.resolve(entry)).has(path.resolve('migrations/ddl.ts')), entry);
});

test('freeze writes once, re-renders only with force, and never touches a released revision', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'freeze-'));
  try {
    const none = new Set<string>();
    assert.deepEqual(await freeze(MIGRATIONS, ['0003'], { sqlDir: dir, released: none }), [
      '0003_remote_runtime',
    ]);
    const file = path.join(dir, frozenName('postgres', '0003_remote_runtime', 'up'));
    const first = readFileSync(file, 'utf8');
    assert.match(first, /CREATE TABLE IF NOT EXISTS "remote_runtime_commands"/);
    assert.equal(readManifest(dir)[frozenName('postgres', '0003_remote_runtime', 'up')], checksum(first));
    await assert.rejects(
      freeze(MIGRATIONS, ['0003_remote_runtime'], { sqlDir: dir, released: none }),
      /0003_remote_runtime is already frozen; pass --force/,
    );
    assert.deepEqual(await freeze(MIGRATIONS, ['0003'], { sqlDir: dir, released: none, force: true }), [
      '0003_remote_runtime',
    ]);
    await assert.rejects(
      freeze(MIGRATIONS, ['0003'], { sqlDir: dir, released: new Set(['0003_remote_runtime']), force: true }),
      /0003_remote_runtime is released \(CHANGELOG.md\); its frozen SQL never changes/,
    );
    assert.deepEqual(
      await freeze(MIGRATIONS, ['pending'], { sqlDir: dir, released: none }).then((x) => x.length),
      MIGRATIONS.length - 1,
    );
    assert.ok(existsSync(path.join(dir, MANIFEST_NAME)));
    await assert.rejects(freeze(MIGRATIONS, ['0999'], { sqlDir: dir }), /Unknown revision "0999"/);
    const dataInUp = defineMigration({
      id: '0999_bad',
      description: 'x',
      kind: 'expand',
      up: async (sql) => void (await sql.query('SELECT 1')),
    });
    await assert.rejects(
      freeze([dataInUp], ['0999_bad'], { sqlDir: dir, released: none }),
      /0999_bad: up\/down may only call sql.exec with literal SQL/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CHANGELOG.md has the package version and names every revision in exactly one section', () => {
  const sections = readChangelog();
  const version = JSON.parse(readFileSync('package.json', 'utf8')).version as string;
  assert.ok(
    sections.some((s) => s.version === version && s.released),
    `CHANGELOG.md has a "## ${version}" section`,
  );
  for (const m of MIGRATIONS)
    assert.equal(
      sections.filter((s) => s.revisions.includes(m.id)).length,
      1,
      `${m.id} is listed in exactly one CHANGELOG section`,
    );
  const known = new Set(MIGRATIONS.map((m) => m.id));
  for (const r of releasedRevisions(sections)) assert.ok(known.has(r), `released ${r} is a known migration`);
  assert.deepEqual(
    [...releasedRevisions(parseChangelog('## Unreleased\n- `0009_b`\n## 1.0.0\n- `0001_a`\n'))],
    ['0001_a'],
  );
});
