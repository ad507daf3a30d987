// The prompt editor's logic (web/src/pages/prompts/prompt-form.ts): the API body from the form with
// the API's own limits as field errors, variables keeping their description and default, and the
// placeholders found in a template text (linear, bounded window).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  bodyOf,
  EMPTY_FORM,
  formOf,
  type PromptTemplate,
  placeholdersIn,
  splitList,
} from '../../web/src/pages/prompts/prompt-form.ts';

test('bodyOf: trimmed fields, lists split and deduplicated, empty description null', () => {
  const r = bodyOf({
    ...EMPTY_FORM,
    name: '  Review  ',
    category: ' ',
    content: 'Review {{file}}',
    tags: 'code, review, , code',
    variables: 'file, lang',
    is_public: true,
  });
  assert.deepEqual(r.body, {
    name: 'Review',
    description: null,
    category: 'general',
    content: 'Review {{file}}',
    tags: ['code', 'review'],
    variables: ['file', 'lang'],
    is_public: true,
  });
  assert.deepEqual(splitList(' a ,b,,a '), ['a', 'b']);
});

test('bodyOf: the API limits come back as field errors', () => {
  const r = bodyOf({
    ...EMPTY_FORM,
    name: '',
    content: '   ',
    category: 'c'.repeat(51),
    tags: 't'.repeat(51),
    variables: 'ok, 1bad, also bad',
  });
  assert.deepEqual(Object.keys(r.errors ?? {}).sort(), ['category', 'content', 'name', 'tags', 'variables']);
  assert.match(r.errors?.variables ?? '', /1bad, also bad/);
  assert.equal(
    bodyOf({ ...EMPTY_FORM, name: 'x'.repeat(201), content: 'c' }).errors?.name,
    'At most 200 characters',
  );
});

test('editing keeps a kept variable’s description and default; formOf shows names', () => {
  const t: PromptTemplate = {
    id: 1,
    name: 'n',
    description: 'd',
    category: 'general',
    content: '{{a}} {{b}}',
    variables: [{ name: 'a', description: 'the a', default: '1' }, 'b'],
    tags: ['x', 'y'],
    author_id: 1,
    tenant_id: 1,
    is_public: false,
    is_featured: false,
    use_count: 0,
    created_at: '',
    updated_at: '',
  };
  const f = formOf(t);
  assert.equal(f.variables, 'a, b');
  assert.equal(f.tags, 'x, y');
  const r = bodyOf({ ...f, variables: 'a, c' }, t.variables);
  assert.deepEqual(r.body?.variables, [{ name: 'a', description: 'the a', default: '1' }, 'c']);
});

test('placeholdersIn finds distinct valid names in order; malformed braces are text; long input is fast', () => {
  assert.deepEqual(placeholdersIn('Hi {{ name }}, {{lang}} and {{name}}; {{ 9x }} {{a b}} {{'), [
    'name',
    'lang',
  ]);
  assert.deepEqual(placeholdersIn('no placeholders'), []);
  const t0 = performance.now();
  assert.deepEqual(placeholdersIn('{{'.repeat(200_000)), []);
  assert.ok(performance.now() - t0 < 2000, 'linear on pathological input');
});
