// The price table of the ROI estimates (domain/roi/prices.ts): longest-prefix matching, the default
// price for unknown or missing models, settings overrides, and exact cost arithmetic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { costOf, DEFAULT_PRICE, money, priceFor, pricingFrom } from '../../domain/roi/prices.ts';

test('a model is priced by the longest matching prefix, case-insensitively', () => {
  const p = pricingFrom();
  assert.deepEqual(priceFor(p, 'claude-sonnet-4-5-20250929'), {
    input: 3,
    output: 15,
    matched: 'claude-sonnet-4',
    priced_by: 'model',
  });
  assert.equal(priceFor(p, 'GPT-4o-mini-2024-07-18').matched, 'gpt-4o-mini');
  assert.equal(priceFor(p, 'gpt-4o-2024-08-06').matched, 'gpt-4o');
  assert.equal(priceFor(p, 'claude-opus-4-5').input, 5);
  assert.equal(priceFor(p, 'claude-opus-4-1').input, 15);
});

test('unknown and missing models use the default price and say so', () => {
  const p = pricingFrom();
  for (const m of ['house-llm', '', null, undefined])
    assert.deepEqual(priceFor(p, m), { ...DEFAULT_PRICE, matched: null, priced_by: 'default' });
});

test('settings add and override models and change the default price', () => {
  const p = pricingFrom({
    models: { 'House-LLM': { input: 1, output: 2 }, 'gpt-4o': { input: 9, output: 9 } },
    default_input_per_million: 4,
    default_output_per_million: 8,
  });
  assert.equal(priceFor(p, 'house-llm-7b').output, 2);
  assert.equal(priceFor(p, 'gpt-4o').input, 9);
  assert.equal(priceFor(p, 'gpt-4o-mini').input, 0.15);
  assert.deepEqual(priceFor(p, 'x'), { input: 4, output: 8, matched: null, priced_by: 'default' });
});

test('cost is input and output tokens at their per-million prices', () => {
  assert.equal(costOf({ input: 15, output: 75 }, 1_000_000, 100_000), 22.5);
  assert.equal(money(costOf({ input: 3, output: 15 }, 34_700, 23_300)), 0.4536);
  assert.equal(costOf({ input: 0.15, output: 0.6 }, 0, 0), 0);
});
