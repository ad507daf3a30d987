// ROI arithmetic (domain/roi/figures.ts) with exact values: message cells priced per model, the
// unattributed daily_usage remainder, grouping, the ROI formulas and the trailing moving average.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_ASSUMPTIONS } from '../../domain/roi/assumptions.ts';
import {
  groupTotals,
  type ModelCell,
  movingAverage,
  priceCells,
  roiOf,
  totalsOf,
  type UsageRow,
  zeroTotals,
} from '../../domain/roi/figures.ts';
import { pricingFrom } from '../../domain/roi/prices.ts';

const pricing = pricingFrom();
const cell = (o: Partial<ModelCell>): ModelCell => ({
  date: '2026-03-30',
  toolName: 'tool-a',
  model: null,
  userId: 1,
  username: 'alice',
  tokens: 0,
  inputTokens: 0,
  outputTokens: 0,
  requests: 0,
  ...o,
});
const usage = (o: Partial<UsageRow>): UsageRow => ({
  date: '2026-03-30',
  toolName: 'tool-a',
  tokens: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheTokens: 0,
  modelsUsed: null,
  ...o,
});

test('message cells are priced at their model, unknown ones at the default price', () => {
  const [opus, none] = priceCells(
    [
      cell({
        model: 'claude-opus-4-1',
        inputTokens: 1_000_000,
        outputTokens: 100_000,
        tokens: 1_100_000,
        requests: 1,
      }),
      cell({ inputTokens: 34_700, outputTokens: 23_300, tokens: 58_000, requests: 13 }),
    ],
    null,
    pricing,
  );
  assert.equal(opus!.cost, 22.5);
  assert.equal(opus!.pricedBy, 'model');
  assert.equal(none!.pricedBy, 'default');
  assert.equal(Math.round(none!.cost * 10_000) / 10_000, 0.4536);
});

test('the daily_usage remainder is added per day and tool, never negative, at its single model; it has no requests (rule 3)', () => {
  const out = priceCells(
    [cell({ inputTokens: 100, outputTokens: 100, tokens: 200, requests: 1 })],
    [
      // two hosts of the same day and tool: summed, models merged (one distinct model)
      usage({ inputTokens: 600_100, outputTokens: 100, tokens: 600_200, modelsUsed: 'gpt-4o' }),
      usage({
        inputTokens: 400_000,
        outputTokens: 1_000_000,
        tokens: 1_400_000,
        modelsUsed: 'gpt-4o',
      }),
      // fully covered by messages: no remainder
      usage({ date: '2026-03-29', toolName: 'tool-b', modelsUsed: 'a,b' }),
      // two models: default price
      usage({ date: '2026-03-28', inputTokens: 1_000_000, tokens: 1_000_000, modelsUsed: 'gpt-4o, o3' }),
    ],
    pricing,
  );
  assert.equal(out.length, 3);
  const [, proxied, mixed] = out;
  assert.deepEqual(
    { ...proxied, cost: proxied!.cost },
    {
      date: '2026-03-30',
      toolName: 'tool-a',
      model: 'gpt-4o',
      userId: null,
      username: null,
      tokens: 2_000_000,
      inputTokens: 1_000_000,
      outputTokens: 1_000_000,
      requests: 0,
      cost: 12.5,
      pricedBy: 'model',
      matched: 'gpt-4o',
      source: 'unattributed',
    },
  );
  assert.equal(mixed!.model, null);
  assert.equal(mixed!.pricedBy, 'default');
  assert.equal(mixed!.cost, 3);
  const under = priceCells(
    [cell({ inputTokens: 500, tokens: 500, requests: 2 })],
    [usage({ inputTokens: 100, tokens: 100 })],
    pricing,
  );
  assert.equal(under.length, 1, 'usage below the messages adds nothing');
});

test('ROI: hours saved, labor value, net benefit and ROI percent', () => {
  assert.deepEqual(
    roiOf({ ...zeroTotals(), requests: 14, tokens: 1_158_000, cost: 22.9536 }, DEFAULT_ASSUMPTIONS),
    {
      requests: 14,
      tokens: 1_158_000,
      input_tokens: 0,
      output_tokens: 0,
      cost: 22.9536,
      hours_saved: 1.17,
      hours_saved_source: 'assumed',
      hours_saved_measured: 0,
      hours_saved_assumed: 1.17,
      labor_value: 58.33,
      net_benefit: 35.38,
      roi_percent: 154.14,
    },
  );
  const custom = roiOf(
    { ...zeroTotals(), requests: 120, cost: 10 },
    { hourly_labor_cost: 80, productivity_multiplier: 0.5, avg_time_saved_per_request: 12, currency: 'EUR' },
  );
  assert.equal(custom.hours_saved, 24);
  assert.equal(custom.labor_value, 960);
  assert.equal(custom.net_benefit, 950);
  assert.equal(custom.roi_percent, 9500);
  assert.equal(roiOf(zeroTotals(), DEFAULT_ASSUMPTIONS).roi_percent, null, 'no cost: no ROI percent');
});

test('groups and totals', () => {
  const priced = priceCells(
    [
      cell({ toolName: 'b', requests: 2, tokens: 10 }),
      cell({ toolName: 'a', requests: 1, tokens: 5 }),
      cell({ toolName: 'b', requests: 3, tokens: 1 }),
    ],
    null,
    pricing,
  );
  const g = groupTotals(priced, (c) => c.toolName);
  assert.deepEqual(
    g.map(([k, t]) => [k, t.requests, t.tokens]),
    [
      ['a', 1, 5],
      ['b', 5, 11],
    ],
  );
  assert.equal(totalsOf(priced).requests, 6);
});

test('trailing moving average over 7 values, fewer at the start', () => {
  assert.deepEqual(movingAverage([7, 0, 2, 0, 0, 0, 5, 14, 0]), [7, 3.5, 3, 2.25, 1.8, 1.5, 2, 3, 3]);
  assert.deepEqual(movingAverage([1, 2, 3], 2), [1, 1.5, 2.5]);
  assert.deepEqual(movingAverage([]), []);
});

test('the remainder is per tenant: one tenant’s messages never cover another tenant’s usage', () => {
  const out = priceCells(
    [cell({ tenantId: 1, inputTokens: 1000, tokens: 1000, requests: 1 })],
    [
      // tenant 1 reported less than its messages (nothing left), tenant 2 has usage without messages
      usage({ tenantId: 1, inputTokens: 800, tokens: 800 }),
      usage({ tenantId: 2, inputTokens: 500, tokens: 500, modelsUsed: 'gpt-4o' }),
    ],
    pricing,
  );
  const rest = out.filter((c) => c.source === 'unattributed');
  assert.deepEqual(
    rest.map((c) => [c.tenantId, c.tokens, c.model]),
    [[2, 500, 'gpt-4o']],
    'summed across tenants, 1,300 - 1,000 would have left 300 tokens in no tenant',
  );
});

test('ROI: measured active time replaces the assumed hours of the requests it covers (issue 29 item 2)', () => {
  const a = DEFAULT_ASSUMPTIONS; // 5 minutes per request
  const measured = roiOf({ ...zeroTotals(), requests: 12, measuredRequests: 12, activeMs: 5_400_000 }, a);
  assert.deepEqual(
    [
      measured.hours_saved,
      measured.hours_saved_source,
      measured.hours_saved_measured,
      measured.hours_saved_assumed,
    ],
    [1.5, 'measured', 1.5, 0],
  );
  const mixed = roiOf({ ...zeroTotals(), requests: 24, measuredRequests: 12, activeMs: 5_400_000 }, a);
  assert.deepEqual(
    [mixed.hours_saved, mixed.hours_saved_source, mixed.hours_saved_assumed],
    [2.5, 'mixed', 1],
  );
  assert.equal(roiOf({ ...zeroTotals(), requests: 12 }, a).hours_saved_source, 'assumed');
});
