// The web application's pure helpers, imported by node directly (no DOM): number, money, percent,
// time, duration and byte formatting (web/src/ui/format.ts) and the login return-path rules
// (web/src/api/client.ts: safeNext, loginPathFor) that keep /login?next= from leaving the site.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loginPathFor, safeNext } from '../../web/src/api/client.ts';
import {
  formatBytes,
  formatDuration,
  formatMoney,
  formatNumber,
  formatPercent,
  formatTime,
  formatTokenLimit,
} from '../../web/src/ui/format.ts';

test('numbers get thousands separators in the given locale; missing values are a dash', () => {
  assert.equal(formatNumber(1234567.891, { locale: 'en-US' }), '1,234,567.89');
  assert.equal(formatNumber(1234567, { locale: 'de-DE' }), '1.234.567');
  assert.equal(formatNumber(0.5, { locale: 'en-US', digits: 0 }), '1');
  assert.equal(formatNumber(-42000, { locale: 'en-US' }), '-42,000');
  for (const v of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY]) assert.equal(formatNumber(v), '—');
  assert.equal(formatMoney(1234.5, { locale: 'en-US' }), '$1,234.50');
  assert.equal(formatMoney(3, { locale: 'en-US', currency: 'EUR' }), '€3.00');
  assert.equal(formatPercent(0.256, { locale: 'en-US' }), '25.6%');
  assert.equal(formatPercent(1, { locale: 'en-US' }), '100%');
  assert.equal(formatPercent(null), '—');
});

test('token limits read the same for users (stored in millions) and tenants (stored in tokens)', () => {
  assert.equal(formatTokenLimit(3, { locale: 'en-US', inMillions: true }), '3,000,000 tokens');
  assert.equal(formatTokenLimit(3_000_000, { locale: 'en-US' }), '3,000,000 tokens');
  assert.equal(formatTokenLimit(1500, { locale: 'en-US' }), '1,500 tokens');
  assert.equal(formatTokenLimit(0, { locale: 'en-US', inMillions: true }), '0 tokens');
  assert.equal(formatTokenLimit(null), 'no limit');
});

test('times are shown in the requested (viewer) zone; bad input is a dash', () => {
  const iso = '2026-03-01T23:30:05Z';
  assert.equal(formatTime(iso, { locale: 'en-GB', timeZone: 'UTC' }), '01/03/2026, 23:30:05');
  assert.equal(formatTime(iso, { locale: 'en-GB', timeZone: 'Asia/Tokyo' }), '02/03/2026, 08:30:05');
  assert.equal(
    formatTime(Date.parse(iso), { locale: 'en-GB', timeZone: 'America/New_York' }),
    '01/03/2026, 18:30:05',
  );
  assert.equal(formatTime(new Date(iso), { locale: 'en-GB', timeZone: 'UTC', dateOnly: true }), '01/03/2026');
  for (const v of [null, undefined, '', 'not a date']) assert.equal(formatTime(v), '—');
  // Without a zone: the process's (the viewer's) zone, same as Intl's default.
  assert.equal(
    formatTime(iso, { locale: 'en-GB' }),
    formatTime(iso, { locale: 'en-GB', timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone }),
  );
});

test('durations use the two largest units', () => {
  assert.equal(formatDuration(0), '0ms');
  assert.equal(formatDuration(250.4), '250ms');
  assert.equal(formatDuration(1500), '1.5s');
  assert.equal(formatDuration(59_999), '60s');
  assert.equal(formatDuration(60_000), '1m');
  assert.equal(formatDuration(61_000), '1m 1s');
  assert.equal(formatDuration(3_723_000), '1h 2m');
  assert.equal(formatDuration(3_600_000 + 5000), '1h');
  assert.equal(formatDuration(2 * 86_400_000 + 3 * 3_600_000 + 7000), '2d 3h');
  assert.equal(formatDuration(-61_000), '-1m 1s');
  assert.equal(formatDuration(undefined), '—');
});

test('bytes use binary units', () => {
  assert.equal(formatBytes(0, { locale: 'en-US' }), '0 B');
  assert.equal(formatBytes(1023, { locale: 'en-US' }), '1,023 B');
  assert.equal(formatBytes(1536, { locale: 'en-US' }), '1.5 KiB');
  assert.equal(formatBytes(5 * 1024 ** 3, { locale: 'en-US' }), '5 GiB');
  assert.equal(formatBytes(null), '—');
});

test('the login return path stays on this site', () => {
  assert.equal(safeNext('/alerts?x=1'), '/alerts?x=1');
  for (const bad of [
    null,
    undefined,
    '',
    'https://evil.example/',
    '//evil.example/x',
    '/\\evil.example',
    'alerts',
  ])
    assert.equal(safeNext(bad), '/', String(bad));
  assert.equal(loginPathFor('/manage/users'), '/login?next=%2Fmanage%2Fusers');
  assert.equal(loginPathFor('/'), '/login');
  assert.equal(loginPathFor('/login?next=%2Fx'), '/login');
});
