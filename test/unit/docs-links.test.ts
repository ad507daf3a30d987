// The README and docs/ link to each other by relative paths (issue 30): every such link must reach an
// existing file, and an anchor must name a heading of that file, so a reader never lands on nothing.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const pages = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? pages(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : [],
  );

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

const anchorsOf = (file: string) =>
  new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ''))),
  );

test('every relative link in README.md and docs/ reaches a file and, with an anchor, a heading', () => {
  const broken: string[] = [];
  let links = 0;
  for (const file of ['README.md', ...pages('docs')]) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1]!;
      if (/^(https?:|mailto:)/.test(href)) continue;
      links++;
      const [target, anchor] = href.split('#') as [string, string | undefined];
      const resolved = target === '' ? file : path.join(path.dirname(file), target);
      if (!existsSync(resolved)) broken.push(`${file}: ${href} (no such file)`);
      else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
        broken.push(`${file}: ${href} (no such heading)`);
    }
  }
  assert.ok(links > 50, `only ${links} relative links found`);
  assert.deepEqual(broken, []);
});

test('the README stays a front door (at most ~200 lines) and maps every docs page', () => {
  const readme = readFileSync('README.md', 'utf8');
  assert.ok(readme.split('\n').length <= 200, 'README.md is longer than 200 lines');
  const index = readFileSync('docs/README.md', 'utf8');
  for (const page of pages('docs').filter((p) => p !== path.join('docs', 'README.md')))
    assert.ok(index.includes(`(${path.relative('docs', page)})`), `docs/README.md does not link ${page}`);
});
