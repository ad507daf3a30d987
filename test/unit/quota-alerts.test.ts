// Quota alert rules (domain/quota-alerts.ts): the highest threshold reached (80/90/100 %, exact at the
// boundary), severities, dedupe keys per subject, quota, threshold and period, and the over-quota test
// that enforcement uses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EMPTY_PERIOD_USAGE, type PeriodUsage, type QuotaLimits } from '../../domain/quota.ts';
import {
  highestThreshold,
  isOverQuota,
  quotaAlertCandidates,
  quotaAlertDedupeKey,
  quotaAlertText,
  severityOf,
} from '../../domain/quota-alerts.ts';

const NO_LIMITS: QuotaLimits = {
  dailyTokens: null,
  monthlyTokens: null,
  dailyRequests: null,
  monthlyRequests: null,
};
const used = (tokens: number, requests: number, reserved = 0): PeriodUsage => ({
  ...EMPTY_PERIOD_USAGE,
  tokensUsed: tokens,
  requestsUsed: requests,
  tokensReserved: reserved,
  requestsReserved: reserved,
});

test('highestThreshold: the highest of 80/90/100 % reached, exact at each boundary', () => {
  assert.equal(highestThreshold(0, 100), null);
  assert.equal(highestThreshold(79, 100), null);
  assert.equal(highestThreshold(80, 100), 80);
  assert.equal(highestThreshold(89, 100), 80);
  assert.equal(highestThreshold(90, 100), 90);
  assert.equal(highestThreshold(99, 100), 90);
  assert.equal(highestThreshold(100, 100), 100);
  assert.equal(highestThreshold(250, 100), 100);
  // No rounding: 7 of 9 is 77.8 %, 8 of 9 is 88.9 %, 9 of 10 is exactly 90 %.
  assert.equal(highestThreshold(7, 9), null);
  assert.equal(highestThreshold(8, 9), 80);
  assert.equal(highestThreshold(9, 10), 90);
  assert.equal(highestThreshold(5, null), null, 'no limit, no alert');
  assert.equal(highestThreshold(0, 0), 100, 'a zero limit is exhausted');
});

test('severity: warning at 80 and 90 %, critical at 100 %', () => {
  assert.equal(severityOf(80), 'warning');
  assert.equal(severityOf(90), 'warning');
  assert.equal(severityOf(100), 'critical');
});

test('candidates: one per limit at its highest threshold, keyed by subject, quota, threshold and period', () => {
  const c = quotaAlertCandidates({
    scope: 'user',
    subjectId: 7,
    limits: { dailyTokens: 1000, monthlyTokens: 100_000, dailyRequests: 10, monthlyRequests: null },
    daily: used(900, 10),
    monthly: used(900, 10),
    day: '2026-11-23',
    month: '2026-11-01',
  });
  assert.deepEqual(
    c.map((x) => [x.dedupeKey, x.severity, x.current, x.limit, x.percentage]),
    [
      ['user:7:daily_tokens:90:2026-11-23', 'warning', 900, 1000, 90],
      ['user:7:daily_requests:100:2026-11-23', 'critical', 10, 10, 100],
    ],
    'monthly tokens at 0.9 % and unlimited monthly requests raise nothing',
  );
  const t = quotaAlertCandidates({
    scope: 'tenant',
    subjectId: 3,
    limits: { dailyTokens: 1000, monthlyTokens: 3000, dailyRequests: 100, monthlyRequests: 300 },
    daily: used(0, 0),
    monthly: used(2999, 1),
    day: '2026-11-23',
    month: '2026-11-01',
  });
  assert.deepEqual(
    t.map((x) => x.dedupeKey),
    ['tenant:3:monthly_tokens:90:2026-11-01'],
  );
  assert.equal(t[0]!.percentage, 99.97);
  assert.equal(quotaAlertDedupeKey('tenant', 3, 'monthly_tokens', 90, '2026-11-01'), t[0]!.dedupeKey);
});

test('requests in flight (reserved) do not raise alerts; only used counts', () => {
  const c = quotaAlertCandidates({
    scope: 'user',
    subjectId: 1,
    limits: { ...NO_LIMITS, dailyRequests: 10 },
    daily: used(0, 5, 5),
    monthly: used(0, 5, 5),
    day: '2026-11-23',
    month: '2026-11-01',
  });
  assert.deepEqual(c, []);
});

test('isOverQuota: any limit reached (used >= limit); unlimited never', () => {
  assert.equal(isOverQuota({ limits: NO_LIMITS, daily: used(1e12, 1e9), monthly: used(1e12, 1e9) }), false);
  const limits = { ...NO_LIMITS, monthlyTokens: 1000 };
  assert.equal(isOverQuota({ limits, daily: used(999, 0), monthly: used(999, 0) }), false);
  assert.equal(isOverQuota({ limits, daily: used(0, 0), monthly: used(1000, 0) }), true);
  assert.equal(
    isOverQuota({ limits: { ...NO_LIMITS, dailyRequests: 3 }, daily: used(0, 3), monthly: used(0, 3) }),
    true,
  );
});

test('alert text names the subject, the quota and the figures', () => {
  const t = quotaAlertText(
    { scope: 'user', period: 'daily', measure: 'requests', threshold: 100, current: 10, limit: 10 },
    'alice',
  );
  assert.equal(t.title, 'User alice exhausted the daily request quota');
  assert.equal(t.message, 'User alice exhausted the daily request quota: 10 of 10 used.');
  const w = quotaAlertText(
    { scope: 'tenant', period: 'monthly', measure: 'tokens', threshold: 80, current: 8, limit: 10 },
    'Acme',
  );
  assert.equal(w.title, 'Tenant Acme reached 80% of the monthly token quota');
});
