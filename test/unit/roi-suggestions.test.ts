// Optimization suggestions (domain/roi/suggestions.ts): each rule fires on its signal at its threshold
// and stays silent below it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ModelCell, priceCells } from '../../domain/roi/figures.ts';
import { pricingFrom } from '../../domain/roi/prices.ts';
import { suggest } from '../../domain/roi/suggestions.ts';

const pricing = pricingFrom();
const cell = (o: Partial<ModelCell>): ModelCell => ({
  date: '2026-03-30',
  toolName: 'tool-a',
  model: 'gpt-4o',
  userId: 1,
  username: 'u',
  tokens: 0,
  inputTokens: 0,
  outputTokens: 0,
  requests: 1,
  ...o,
});
const run = (cells: Partial<ModelCell>[], cache = { inputTokens: 0, cacheTokens: 0 }) =>
  suggest(priceCells(cells.map(cell), null, pricing), cache, pricing);
const types = (s: ReturnType<typeof suggest>) => s.map((x) => x.type);

test('expensive_model_share: premium models at >= 50 % of cost, with the saving at the default price', () => {
  const s = run([
    { model: 'claude-opus-4-1', inputTokens: 1_000_000, outputTokens: 100_000 }, // 22.5
    { model: 'gpt-4o-mini', inputTokens: 1_000_000, outputTokens: 1_000_000 }, // 0.75
  ]);
  assert.deepEqual(types(s), ['expensive_model_share']);
  assert.equal(s[0]!.estimated_saving, 18, '22.5 - (3 + 1.5)');
  assert.deepEqual(s[0]!.signal.models, ['claude-opus-4-1']);
  assert.deepEqual(types(run([{ model: 'gpt-4o', inputTokens: 1_000_000 }])), []);
});

test('low_cache_hit_rate below 20 % over at least 10,000 input tokens', () => {
  assert.deepEqual(types(run([], { inputTokens: 10_000, cacheTokens: 2_400 })), ['low_cache_hit_rate']);
  assert.deepEqual(types(run([], { inputTokens: 10_000, cacheTokens: 2_500 })), []);
  assert.deepEqual(types(run([], { inputTokens: 9_999, cacheTokens: 0 })), []);
});

test('high_tokens_per_request: a tool above 1.5x the overall rate with >= 3 requests', () => {
  const s = run([
    { toolName: 'heavy', tokens: 30_000, requests: 3 },
    { toolName: 'light', tokens: 1_000, requests: 10 },
  ]);
  assert.deepEqual(types(s), ['high_tokens_per_request']);
  assert.equal(s[0]!.signal.tool_name, 'heavy');
  assert.equal(s[0]!.signal.tokens_per_request, 10_000);
  assert.deepEqual(types(run([{ toolName: 'heavy', tokens: 30_000, requests: 3 }])), [], 'one tool only');
  assert.deepEqual(
    types(
      run([
        { toolName: 'heavy', tokens: 30_000, requests: 2 },
        { toolName: 'light', tokens: 10, requests: 10 },
      ]),
    ),
    [],
  );
});

test('unpriced_models lists the models priced at the default price', () => {
  const s = run([
    { model: 'house-llm', inputTokens: 10, outputTokens: 5 },
    { model: null, inputTokens: 1 },
  ]);
  assert.deepEqual(types(s), ['unpriced_models']);
  assert.deepEqual(s[0]!.signal, { tokens: 16, models: ['(none)', 'house-llm'] });
});
