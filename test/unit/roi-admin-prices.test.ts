// Price precedence and the admin override rules (domain/roi/prices.ts effectivePrices,
// domain/roi/admin-prices.ts): admin > config > builtin per key and per default price, the merge of a
// PUT, DELETE, the stored limit, and storage that does not parse.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyDelete,
  applyPut,
  MAX_ADMIN_PRICES,
  parseStoredPrices,
  putPricesBody,
  TooManyPricesError,
} from '../../domain/roi/admin-prices.ts';
import { DEFAULT_MODEL_PRICES, effectivePrices, priceFor } from '../../domain/roi/prices.ts';

test('admin > config > builtin, per key and per default price', () => {
  const e = effectivePrices(
    {
      models: { 'GPT-4o': { input: 9, output: 9 }, house: { input: 1, output: 1 } },
      default_output_per_million: 20,
    },
    {
      models: { house: { input: 2, output: 2 }, 'claude-opus-4': { input: 1, output: 1 } },
      default_input_per_million: 0,
    },
  );
  const src = Object.fromEntries(e.rows.map((r) => [r.model, [r.input, r.output, r.source]]));
  assert.deepEqual(src['gpt-4o'], [9, 9, 'config']);
  assert.deepEqual(src.house, [2, 2, 'admin']);
  assert.deepEqual(src['claude-opus-4'], [1, 1, 'admin']);
  assert.deepEqual(src['claude-sonnet-4'], [3, 15, 'builtin']);
  assert.equal(e.rows.length, Object.keys(DEFAULT_MODEL_PRICES).length + 1);
  assert.deepEqual(e.default_price, { input: 0, output: 20, input_source: 'admin', output_source: 'config' });
  assert.deepEqual(priceFor(e.pricing, 'claude-opus-4-1').input, 1);
  assert.deepEqual(priceFor(e.pricing, 'unknown'), {
    input: 0,
    output: 20,
    matched: null,
    priced_by: 'default',
  });
  // A settings default equal to the built-in one is reported as built-in.
  assert.equal(effectivePrices({ default_input_per_million: 3 }).default_price.input_source, 'builtin');
});

test('a PUT merges prefixes, null clears an overridden default, DELETE removes one prefix', () => {
  const body = (b: unknown) => putPricesBody.parse(b);
  const a = applyPut(
    undefined,
    body({ models: { x: { input: 1, output: 2 } }, default_input_per_million: 4 }),
  );
  assert.deepEqual(a, { models: { x: { input: 1, output: 2 } }, default_input_per_million: 4 });
  const b = applyPut(a, body({ models: { y: { input: 0, output: 0 } }, default_input_per_million: null }));
  assert.deepEqual(b, { models: { x: { input: 1, output: 2 }, y: { input: 0, output: 0 } } });
  assert.deepEqual(applyDelete(b, 'x'), { models: { y: { input: 0, output: 0 } } });
  assert.equal(applyDelete(b, 'z'), undefined);
  assert.equal(applyDelete(undefined, 'x'), undefined);
  assert.equal(applyDelete(b, 'constructor'), undefined, 'inherited names are not overrides');
});

test('at most MAX_ADMIN_PRICES stored prefixes; changing a stored one is not a new entry', () => {
  const full = {
    models: Object.fromEntries(
      Array.from({ length: MAX_ADMIN_PRICES }, (_, i) => [`m${i}`, { input: 1, output: 1 }]),
    ),
  };
  assert.throws(
    () => applyPut(full, putPricesBody.parse({ models: { extra: { input: 1, output: 1 } } })),
    TooManyPricesError,
  );
  assert.equal(
    Object.keys(applyPut(full, putPricesBody.parse({ models: { m0: { input: 5, output: 5 } } })).models)
      .length,
    MAX_ADMIN_PRICES,
  );
});

test('stored JSON that does not parse or validate counts as no override', () => {
  for (const bad of [
    '',
    'not json',
    '[]',
    '{"models":{"UPPER":{"input":1,"output":1}}}',
    '{"models":{"x":{"input":-1,"output":1}}}',
  ])
    assert.equal(parseStoredPrices(bad), undefined, bad);
  assert.deepEqual(parseStoredPrices('{"models":{"x":{"input":1,"output":2}}}'), {
    models: { x: { input: 1, output: 2 } },
  });
});
