// domain/usage-report.ts: a self-declared agent usage report counts only within the room left under
// every limit of the session's user and tenant (limit - used - reserved), never beyond.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EMPTY_PERIOD_USAGE, type QuotaLimits } from '../../domain/quota.ts';
import { clipToRoom, roomLeft } from '../../domain/usage-report.ts';

const limits = (over: Partial<QuotaLimits> = {}): QuotaLimits => ({
  dailyTokens: null,
  monthlyTokens: null,
  dailyRequests: null,
  monthlyRequests: null,
  ...over,
});
const used = (tokensUsed: number, requestsUsed = 0, tokensReserved = 0) => ({
  ...EMPTY_PERIOD_USAGE,
  tokensUsed,
  requestsUsed,
  tokensReserved,
});

test('the room left is the smallest of every limit, reservations included; no limit is null', () => {
  assert.deepEqual(roomLeft([{ limits: limits(), daily: used(5), monthly: used(5) }]), {
    tokens: null,
    requests: null,
  });
  const user = { limits: limits({ monthlyTokens: 1000 }), daily: used(10), monthly: used(900, 0, 50) };
  const tenant = {
    limits: limits({ dailyTokens: 500, dailyRequests: 3 }),
    daily: used(480, 1),
    monthly: used(0),
  };
  assert.deepEqual(roomLeft([user]), { tokens: 50, requests: null });
  assert.deepEqual(roomLeft([user, tenant]), { tokens: 20, requests: 2 });
  const over = { limits: limits({ dailyTokens: 10 }), daily: used(15), monthly: used(0) };
  assert.deepEqual(roomLeft([over]), { tokens: 0, requests: null }, 'never negative');
});

test('a report is clipped to the room; with no token or no request left nothing counts', () => {
  assert.deepEqual(clipToRoom({ tokens: 300, requests: 4 }, { tokens: null, requests: null }), {
    tokens: 300,
    requests: 4,
  });
  assert.deepEqual(clipToRoom({ tokens: 300, requests: 4 }, { tokens: 120, requests: 2 }), {
    tokens: 120,
    requests: 2,
  });
  assert.deepEqual(clipToRoom({ tokens: 300, requests: 4 }, { tokens: 0, requests: 2 }), {
    tokens: 0,
    requests: 0,
  });
  assert.deepEqual(clipToRoom({ tokens: 300, requests: 4 }, { tokens: 50, requests: 0 }), {
    tokens: 0,
    requests: 0,
  });
});
