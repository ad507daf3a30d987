// Writes the settings tables of docs/operators/settings.md from config/settings-docs.ts (one source;
// test/unit/settings-docs.test.ts fails when the page and this output differ).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderSettingsPage } from '../config/settings-docs.ts';

const page = path.resolve(import.meta.dirname, '..', 'docs/operators/settings.md');
const before = readFileSync(page, 'utf8');
const after = renderSettingsPage(before);
if (after === before) console.log(`${path.relative(process.cwd(), page)} is up to date`);
else {
  writeFileSync(page, after);
  console.log(`wrote the settings tables into ${path.relative(process.cwd(), page)}`);
}
