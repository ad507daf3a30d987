// Quota arithmetic (domain/quota.ts): period keys at UTC boundaries, units, the room rule shared with
// the reservation SQL, and the refusal message.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  dayKey,
  EMPTY_PERIOD_USAGE,
  exceededDimensions,
  hasRoom,
  monthKey,
  nextMonthKey,
  quotaExceededMessage,
  refusalPeriod,
  secondsUntilPeriodEnd,
  tenantQuotaLimits,
  userQuotaLimits,
} from '../../domain/quota.ts';

describe('period keys (UTC)', () => {
  test('day, month and next month', () => {
    const at = new Date('2025-12-31T23:59:59.999Z');
    assert.equal(dayKey(at), '2025-12-31');
    assert.equal(monthKey(at), '2025-12-01');
    assert.equal(nextMonthKey(at), '2026-01-01');
    assert.equal(dayKey(new Date('2026-01-01T00:00:00.000Z')), '2026-01-01');
    assert.equal(nextMonthKey(new Date('2024-02-29T12:00:00Z')), '2024-03-01');
  });
  test('seconds until the period ends', () => {
    const at = new Date('2025-06-30T23:59:00Z');
    assert.equal(secondsUntilPeriodEnd('daily', at), 60);
    assert.equal(secondsUntilPeriodEnd('monthly', at), 60);
    assert.equal(secondsUntilPeriodEnd('monthly', new Date('2025-06-01T00:00:00Z')), 30 * 86_400);
  });
});

describe('limits', () => {
  test('user token quotas are millions; null means no personal limit', () => {
    assert.deepEqual(
      userQuotaLimits({
        dailyTokenQuota: 2,
        monthlyTokenQuota: null,
        dailyRequestQuota: 10,
        monthlyRequestQuota: null,
      }),
      { dailyTokens: 2_000_000, monthlyTokens: null, dailyRequests: 10, monthlyRequests: null },
    );
  });
  test('a tenant without a tenant_quotas row has the spec defaults', () => {
    assert.deepEqual(tenantQuotaLimits(undefined), {
      dailyTokens: 1_000_000,
      monthlyTokens: 30_000_000,
      dailyRequests: 10_000,
      monthlyRequests: 300_000,
    });
  });
});

describe('the room rule', () => {
  test('a request needs one request and one token of room, counting what is in flight', () => {
    assert.equal(hasRoom(9, 0, 1, 10), true);
    assert.equal(hasRoom(9, 1, 1, 10), false, 'the last unit is taken by a request in flight');
    assert.equal(
      hasRoom(10, 0, 0, 10),
      false,
      'an exhausted token limit refuses even a request of unknown size',
    );
    assert.equal(hasRoom(1e12, 0, 1, null), true);
    assert.equal(hasRoom(0, 0, 1, 0), false, 'a zero quota allows nothing');
  });
  test('exceeded dimensions and the message name the first exhausted one', () => {
    const exceeded = exceededDimensions(
      'tenant',
      { dailyTokens: 100, monthlyTokens: null, dailyRequests: 5, monthlyRequests: 50 },
      { ...EMPTY_PERIOD_USAGE, tokensUsed: 120, requestsUsed: 2 },
      { ...EMPTY_PERIOD_USAGE, requestsUsed: 49, requestsReserved: 1 },
    );
    assert.deepEqual(
      exceeded.map((e) => `${e.period}_${e.measure}`),
      ['daily_tokens', 'monthly_requests'],
    );
    assert.equal(
      quotaExceededMessage(exceeded),
      "Your tenant's daily token quota is exhausted (120 of 100 used)",
    );
    assert.equal(refusalPeriod(exceeded), 'monthly');
  });
});
