// The ROI query (domain/roi/assumptions.ts): defaults, positive-number assumptions, the 1-8 character
// currency label, dates and user_id; each refusal names its parameter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assumptionsOf, DEFAULT_ASSUMPTIONS, roiQuerySchema } from '../../domain/roi/assumptions.ts';
import { parseInput } from '../../domain/validation.ts';

const parse = (q: Record<string, unknown>) => parseInput(roiQuerySchema, q);
const refused = (q: Record<string, unknown>, param: string) =>
  assert.throws(
    () => parse(q),
    (e: Error & { status?: number }) => e.message.startsWith(`${param}:`) && e.status === 400,
    `${JSON.stringify(q)} names ${param}`,
  );

test('defaults: 50 per hour, multiplier 1, 5 minutes per request, USD', () => {
  const q = parse({});
  assert.deepEqual(assumptionsOf(q), DEFAULT_ASSUMPTIONS);
  assert.deepEqual(DEFAULT_ASSUMPTIONS, {
    hourly_labor_cost: 50,
    productivity_multiplier: 1,
    avg_time_saved_per_request: 5,
    currency: 'USD',
  });
  assert.equal(q.start_date, undefined);
  assert.equal(q.user_id, undefined);
});

test('given values are read exactly', () => {
  const q = parse({
    hourly_labor_cost: '80.5',
    productivity_multiplier: '0.75',
    avg_time_saved_per_request: '12',
    currency: 'EURO€',
    user_id: '7',
    tool_name: 'claude',
    start_date: '2026-03-01',
    end_date: '2026-03-31',
  });
  assert.deepEqual(assumptionsOf(q), {
    hourly_labor_cost: 80.5,
    productivity_multiplier: 0.75,
    avg_time_saved_per_request: 12,
    currency: 'EURO€',
  });
  assert.equal(q.user_id, 7);
  assert.equal(parse({ currency: '12345678' }).currency, '12345678');
});

test('assumptions must be plain positive numbers', () => {
  for (const p of ['hourly_labor_cost', 'productivity_multiplier', 'avg_time_saved_per_request'])
    for (const bad of ['0', '-1', 'abc', '', '1e3', 'Infinity', '1.', ' 5', '0.0', ['1', '2']])
      refused({ [p]: bad }, p);
});

test('currency is 1 to 8 characters', () => {
  refused({ currency: '' }, 'currency');
  refused({ currency: '123456789' }, 'currency');
  refused({ currency: ' USD' }, 'currency');
});

test('dates and user_id are validated', () => {
  refused({ start_date: '2026-02-30' }, 'start_date');
  refused({ end_date: '31-03-2026' }, 'end_date');
  refused({ user_id: '0' }, 'user_id');
  refused({ user_id: 'x' }, 'user_id');
  refused({ tool_name: '' }, 'tool_name');
});
