// Honest status words of the web app (issue 28 item 5): codes shown as words through one mapping,
// quota percentages that go past 100, an active tenant over its quota called "over quota", and a
// remote session whose CLI never ran not called "completed".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tenantStatusWord } from '../../web/src/pages/manage/tenant-status.ts';
import { sessionStatusWord } from '../../web/src/pages/remote/types.ts';
import { codeWords, usedPercent } from '../../web/src/ui/format.ts';

test('codes become words; abbreviations stay in capitals', () => {
  assert.equal(codeWords('tenant_daily_tokens'), 'Tenant daily tokens');
  assert.equal(codeWords('user_monthly_requests'), 'User monthly requests');
  assert.equal(codeWords('sso_enabled'), 'SSO enabled');
  assert.equal(codeWords('cli-not-found'), 'CLI not found');
  assert.equal(codeWords('active'), 'Active');
  assert.equal(codeWords(''), '');
  assert.equal(codeWords(null), '');
});

test('the used percentage is the real one, past 100', () => {
  assert.equal(usedPercent(1_560_000, 1_000_000), 156);
  assert.equal(usedPercent(25, 100), 25);
  assert.equal(usedPercent(5, 0), 0);
  assert.equal(usedPercent(-3, 100), 0);
});

test('an active tenant that reached a limit is "over quota"; other statuses keep their word', () => {
  assert.deepEqual(tenantStatusWord('active', ['daily_tokens', 'monthly_requests']), {
    word: 'over quota',
    bad: true,
    reached: ['Daily tokens', 'Monthly requests'],
  });
  assert.deepEqual(tenantStatusWord('active', []), { word: 'active', bad: false, reached: [] });
  assert.deepEqual(tenantStatusWord('active'), { word: 'active', bad: false, reached: [] });
  assert.equal(tenantStatusWord('suspended', ['daily_tokens']).word, 'suspended');
  assert.equal(tenantStatusWord('suspended').bad, true);
  assert.equal(tenantStatusWord('trial').word, 'trial');
});

test('a remote session that ended before its CLI ran is not "completed"', () => {
  assert.equal(
    sessionStatusWord({ status: 'completed', cli_started_at: null }),
    'ended before the CLI started',
  );
  assert.equal(
    sessionStatusWord({ status: 'completed', cli_started_at: '2026-11-28T10:00:00Z' }),
    'completed',
  );
  assert.equal(sessionStatusWord({ status: 'stopped', cli_started_at: null }), 'stopped');
  assert.equal(sessionStatusWord({ status: 'active', cli_started_at: null }), 'active');
});
