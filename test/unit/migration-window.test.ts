// The compatibility-window rule (document 2 "Versioning" 4-5): expand keeps the oldest build that can
// serve the database, contract moves it to the revision before; derived in one place (window.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIGRATIONS, MIN_COMPATIBLE } from '../../migrations/index.ts';
import type { Migration, MigrationKind } from '../../migrations/migration.ts';
import { compatibilityFloors, minCompatible } from '../../migrations/window.ts';

const m = (id: string, kind?: MigrationKind): Migration => ({ id, description: id, kind });

test('expand keeps the floor, contract moves it to the revision before, missing kind counts as contract', () => {
  const history = [
    m('0001_base', 'expand'),
    m('0002_add_table', 'expand'),
    m('0003_add_column', 'expand'),
    m('0004_drop_column', 'contract'),
    m('0005_add_index', 'expand'),
    m('0006_rename', 'contract'),
    m('0007_unmarked'),
  ];
  assert.deepEqual(Object.fromEntries(compatibilityFloors(history)), {
    '0001_base': '0001_base',
    '0002_add_table': '0001_base',
    '0003_add_column': '0001_base',
    '0004_drop_column': '0003_add_column',
    '0005_add_index': '0003_add_column',
    '0006_rename': '0005_add_index',
    '0007_unmarked': '0006_rename',
  });
  assert.equal(minCompatible(history.slice(0, 3)), '0001_base');
  assert.equal(minCompatible(history.slice(0, 5)), '0003_add_column');
  assert.equal(
    minCompatible([m('0001_only', 'contract')]),
    '0001_only',
    'the first revision is its own floor',
  );
});

test('every registered migration declares its kind, and MIN_COMPATIBLE is derived from them', () => {
  for (const x of MIGRATIONS)
    assert.ok(x.kind === 'expand' || x.kind === 'contract', `${x.id} declares kind`);
  assert.equal(MIN_COMPATIBLE, minCompatible(MIGRATIONS));
  assert.notEqual(MIN_COMPATIBLE, MIGRATIONS.at(-1)!.id, 'the window is wider than head alone');
});
