// The dashboard's data shaping (web/src/pages/dashboard/figures.ts): the "last N days" range in UTC,
// the uPlot columns of the daily figures, and the quota bars (only limited dimensions, user then
// tenant, daily vs monthly wording).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chartSeries, lastDays, quotaBars } from '../../web/src/pages/dashboard/figures.ts';

test('lastDays: N days ending today in UTC, inclusive; at least one day', () => {
  const late = new Date('2026-03-01T23:30:00-05:00'); // 2026-03-02 04:30 UTC
  assert.deepEqual(lastDays(7, late), { start: '2026-02-24', end: '2026-03-02' });
  assert.deepEqual(lastDays(1, late), { start: '2026-03-02', end: '2026-03-02' });
  assert.deepEqual(lastDays(0, late), { start: '2026-03-02', end: '2026-03-02' });
  // Across a leap day: 2024-02-29 is one of the 30.
  assert.deepEqual(lastDays(30, new Date('2024-03-01T00:00:00Z')), {
    start: '2024-02-01',
    end: '2024-03-01',
  });
});

test('chartSeries: seconds at midnight UTC, tokens and requests in order; bad dates skipped', () => {
  const [xs, tokens, requests] = chartSeries([
    { date: '2026-01-01', tokens: 1500, requests: 3 },
    { date: 'not-a-date', tokens: 9, requests: 9 },
    { date: '2026-01-02', tokens: 0, requests: 0 },
  ]);
  assert.deepEqual(xs, [Date.UTC(2026, 0, 1) / 1000, Date.UTC(2026, 0, 2) / 1000]);
  assert.deepEqual(tokens, [1500, 0]);
  assert.deepEqual(requests, [3, 0]);
  assert.deepEqual(chartSeries([]), [[], [], []]);
});

test('quotaBars: one bar per limited dimension, user before tenant, null limits skipped', () => {
  const q = (token_limit: number | null, request_limit: number | null) => ({
    tokens_used: 1200,
    requests_used: 7,
    token_limit,
    request_limit,
  });
  assert.deepEqual(quotaBars({ period: 'daily', user: q(null, null), tenant: null }), []);
  const bars = quotaBars({ period: 'monthly', user: q(5000, null), tenant: q(null, 100) });
  assert.deepEqual(bars, [
    { key: 'user-tokens', label: 'Your tokens this month', used: 1200, limit: 5000 },
    { key: 'tenant-requests', label: 'Your tenant’s requests this month', used: 7, limit: 100 },
  ]);
  assert.equal(quotaBars({ period: 'daily', user: q(1, 2), tenant: null })[1]?.label, 'Your requests today');
});
