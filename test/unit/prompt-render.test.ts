// Prompt rendering (domain/workspace/prompt-render.ts): one-pass `{{name}}` substitution, missing
// variables named, values never re-expanded, defaults, and linear scanning of hostile templates.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BadRequestError } from '../../domain/errors.ts';
import { isVariableName, placeholderNames, renderPrompt } from '../../domain/workspace/prompt-render.ts';

test('substitutes every placeholder, spaces inside the braces allowed, repeated names too', () => {
  const r = renderPrompt('Hi {{name}}, review {{ file }} for {{name}}.', { name: 'Ada', file: 'a.ts' });
  assert.equal(r.rendered, 'Hi Ada, review a.ts for Ada.');
  assert.deepEqual(r.used, ['name', 'file']);
});

test('a missing variable is a 400 naming it (all missing listed)', () => {
  assert.throws(
    () => renderPrompt('{{a}} {{b}} {{c}}', { b: 'x' }),
    (e: unknown) =>
      e instanceof BadRequestError &&
      e.status === 400 &&
      e.message === 'Missing variable: a' &&
      JSON.stringify(e.extra) === JSON.stringify({ missing: ['a', 'c'] }),
  );
});

test('values are never re-expanded (no template injection) and nothing is evaluated', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${...}` must survive rendering
  const r = renderPrompt('{{a}} and {{b}}', { a: '{{b}}', b: '${process.exit(1)} {{constructor}}' });
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal `${...}` must survive rendering
  assert.equal(r.rendered, '{{b}} and ${process.exit(1)} {{constructor}}');
});

test('object prototype names are not values: a missing `constructor` is missing', () => {
  assert.throws(() => renderPrompt('{{constructor}}', {}), /Missing variable: constructor/);
  assert.equal(renderPrompt('{{toString}}', { toString: 'ok' }).rendered, 'ok');
});

test('declared defaults fill missing values; given values win', () => {
  const declared = [{ name: 'lang', default: 'TypeScript' }, 'topic'];
  assert.equal(
    renderPrompt('{{lang}}: {{topic}}', { topic: 'tests' }, declared).rendered,
    'TypeScript: tests',
  );
  assert.equal(renderPrompt('{{lang}}', { lang: 'Go' }, declared).rendered, 'Go');
});

test('text that is not a placeholder stays literal', () => {
  const t = '{{ }} {{not valid}} {{1x}} {single} }} {{ and {{ok}} {{';
  assert.deepEqual(placeholderNames(t), ['ok']);
  assert.equal(renderPrompt(t, { ok: 'Y' }).rendered, '{{ }} {{not valid}} {{1x}} {single} }} {{ and Y {{');
});

test('a template without placeholders renders unchanged; an empty variables map is fine', () => {
  assert.equal(renderPrompt('plain text', {}).rendered, 'plain text');
});

test('hostile templates (many unclosed braces) scan in linear work', () => {
  // 200k unclosed `{{` with no `}}`: a scanner that searched to the end for each would do ~10^10 steps.
  const hostile = '{{'.repeat(100_000) + ' '.repeat(100_000);
  assert.deepEqual(placeholderNames(hostile), []);
  const spaced = `{{${' '.repeat(50_000)}}}`.repeat(4);
  assert.deepEqual(placeholderNames(spaced), []);
});

test('variable names: letter or _ first, then letters, digits, _ . -, at most 64', () => {
  assert.ok(isVariableName('user_name'));
  assert.ok(isVariableName('a.b-c'));
  assert.ok(!isVariableName('1abc'));
  assert.ok(!isVariableName('has space'));
  assert.ok(!isVariableName('x'.repeat(65)));
});
