// The idle-quota rule (domain/roi/idle-quota.ts): the 20 % threshold on both sides, daily and monthly
// figures, the suggested quota with headroom, users in millions and tenants in tokens, and no
// suggestion without a quota or when the suggestion would not be lower.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { daysOf } from '../../domain/analytics/days.ts';
import { idleQuotaSuggestions, type QuotaSubject } from '../../domain/roi/idle-quota.ts';

const DAYS = daysOf('2026-04-01', '2026-04-30');
const subject = (s: Partial<QuotaSubject> & { perDay?: number }): QuotaSubject => ({
  kind: 'user',
  id: 1,
  name: 'u',
  tenantId: 1,
  dailyTokenQuota: null,
  monthlyTokenQuota: null,
  tokensByDay: new Map(DAYS.map((d) => [d, s.perDay ?? 0])),
  ...s,
});

test('threshold: 19.99 % used is idle, 20 % is not', () => {
  assert.equal(idleQuotaSuggestions([subject({ dailyTokenQuota: 10, perDay: 1_999_000 })], DAYS).length, 1);
  assert.equal(idleQuotaSuggestions([subject({ dailyTokenQuota: 10, perDay: 2_000_000 })], DAYS).length, 0);
  // Monthly: 30 days x 199,000 = 5.97M of 30M = 19.9 %.
  const m = idleQuotaSuggestions([subject({ monthlyTokenQuota: 30, perDay: 199_000 })], DAYS);
  assert.deepEqual(m[0]!.signal.quotas, [
    {
      quota: 'monthly_token_quota',
      unit: 'million tokens',
      current: 30,
      suggested: 9, // 5.97M x 1.5 = 8.955M -> 9
      used_percent: 19.9,
      projected_monthly_tokens: 5_970_000,
      peak_daily_tokens: 199_000,
    },
  ]);
});

test('no quota, a zero quota, or a suggestion not below the quota: nothing', () => {
  assert.deepEqual(idleQuotaSuggestions([subject({ perDay: 0 })], DAYS), []);
  assert.deepEqual(idleQuotaSuggestions([subject({ dailyTokenQuota: 0 })], DAYS), []);
  // 1M/day quota, nothing used: the smallest user quota is 1 (million), not lower.
  assert.deepEqual(idleQuotaSuggestions([subject({ dailyTokenQuota: 1 })], DAYS), []);
  // A peak day keeps the suggestion up: 10M quota, one 9M day -> 13.5M suggested, not lower.
  const spiky = subject({ dailyTokenQuota: 10, tokensByDay: new Map([['2026-04-05', 9_000_000]]) });
  assert.deepEqual(idleQuotaSuggestions([spiky], DAYS), []);
});

test('tenants are in tokens, rounded up to thousands; days outside the period do not count', () => {
  const t = subject({
    kind: 'tenant',
    id: 7,
    name: 'acme',
    dailyTokenQuota: 1_000_000,
    tokensByDay: new Map([
      ['2026-04-02', 10_001],
      ['2026-05-02', 5_000_000],
    ]),
  });
  const [s] = idleQuotaSuggestions([t], DAYS);
  assert.equal(s!.signal.subject, 'tenant');
  assert.equal(s!.signal.tenant_name, 'acme');
  assert.equal(s!.signal.tokens_in_period, 10_001);
  assert.equal((s!.signal.quotas as any[])[0].suggested, 16_000); // 10,001 x 1.5 -> 16,000
  assert.equal((s!.signal.quotas as any[])[0].unit, 'tokens');
  assert.deepEqual(idleQuotaSuggestions([t], []), []);
});
