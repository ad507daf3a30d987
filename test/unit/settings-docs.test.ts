// The settings reference has one source (config/settings-docs.ts, issue 30 item 2): every setting of
// config/settings.ts has a row, no row names a setting that does not exist, and the page shows exactly
// what `npm run docs:settings` renders.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { renderSettingsPage, settingsDocsGaps } from '../../config/settings-docs.ts';

test('every setting has a row in the settings reference, and every row names a real setting', () => {
  const { undocumented, unknown } = settingsDocsGaps();
  assert.deepEqual(undocumented, [], 'settings without a row in config/settings-docs.ts');
  assert.deepEqual(unknown, [], 'rows naming no setting of config/settings.ts');
});

test('docs/operators/settings.md holds the tables rendered from config/settings-docs.ts', () => {
  const page = readFileSync('docs/operators/settings.md', 'utf8');
  assert.equal(page, renderSettingsPage(page), 'the page differs: run `npm run docs:settings`');
  assert.match(page, /\| `SVC_ENCRYPTION_KEY` \|/);
  assert.match(page, /\| `remote\.terminal_access` \|/);
});

test('a page without the markers is refused rather than left stale', () => {
  assert.throws(() => renderSettingsPage('# Settings\n'), /settings-flat/);
});
