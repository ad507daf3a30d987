// The usage report's grouping (domain/usage/report-rows.ts) with exact values: one row per key, most
// tokens first (ties by label), keyless usage in one row said in words, labels from usernames and
// tenant names, money rounded per row and the totals summed before rounding.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PricedCell } from '../../domain/roi/figures.ts';
import { reportRows, reportTotals } from '../../domain/usage/report-rows.ts';

const cell = (o: Partial<PricedCell>): PricedCell => ({
  date: '2026-03-30',
  toolName: 'tool-a',
  model: null,
  userId: 1,
  username: 'alice',
  tenantId: 1,
  tokens: 0,
  inputTokens: 0,
  outputTokens: 0,
  requests: 0,
  cost: 0,
  pricedBy: 'default',
  matched: null,
  source: 'messages',
  ...o,
});

const cells = [
  cell({ tokens: 100, inputTokens: 60, outputTokens: 40, requests: 1, cost: 0.00004 }),
  cell({ toolName: 'tool-b', tokens: 50, inputTokens: 50, requests: 2, cost: 0.00004 }),
  cell({ userId: 2, username: 'bob', tenantId: 2, model: 'gpt-4o', tokens: 150, requests: 1, cost: 1.23456 }),
  cell({ userId: null, username: null, tenantId: 2, tokens: 150, source: 'unattributed', cost: 0.1 }),
];

test('by user: most tokens first, ties by label, keyless usage in one row said in words', () => {
  const rows = reportRows(cells, 'user');
  assert.deepEqual(
    rows.map((r) => [r.key, r.label, r.tokens, r.requests, r.cost]),
    [
      [null, 'Unattributed (no known user)', 150, 0, 0.1],
      [1, 'alice', 150, 3, 0.0001],
      [2, 'bob', 150, 1, 1.2346],
    ],
  );
  assert.deepEqual(rows[1], {
    key: 1,
    label: 'alice',
    input_tokens: 110,
    output_tokens: 40,
    tokens: 150,
    requests: 3,
    cost: 0.0001,
  });
});

test('by model, tool and tenant; tenant names from the map, an unknown one by its id', () => {
  assert.deepEqual(
    reportRows(cells, 'model').map((r) => [r.key, r.label, r.tokens]),
    [
      [null, '(no model)', 300],
      ['gpt-4o', 'gpt-4o', 150],
    ],
  );
  assert.deepEqual(
    reportRows(cells, 'tool').map((r) => [r.key, r.tokens]),
    [
      ['tool-a', 400],
      ['tool-b', 50],
    ],
  );
  assert.deepEqual(
    reportRows(cells, 'tenant', new Map([[2, 'Beta']])).map((r) => [r.key, r.label, r.tokens]),
    [
      [2, 'Beta', 300],
      [1, 'tenant 1', 150],
    ],
  );
  assert.deepEqual(reportTotals(cells), {
    input_tokens: 110,
    output_tokens: 40,
    tokens: 450,
    requests: 4,
    cost: 1.3346,
  });
});
