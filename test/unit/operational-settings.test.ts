// Operational settings added for scale-out and lean tests: their defaults (what production runs with)
// and their bounds (a typo is refused at startup, never silently clamped).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSettings, SettingsError } from '../../config/settings.ts';
import { retryTiming } from '../../domain/autonomous/limits.ts';

test('SVC_TEMPORAL_CONNECT_TIMEOUT_MS: default 5 s, 100 ms to 10 min, whole milliseconds', () => {
  assert.equal(loadSettings({}).SVC_TEMPORAL_CONNECT_TIMEOUT_MS, 5000);
  assert.equal(loadSettings({ SVC_TEMPORAL_CONNECT_TIMEOUT_MS: '500' }).SVC_TEMPORAL_CONNECT_TIMEOUT_MS, 500);
  for (const bad of ['99', '600001', '1.5', 'soon'])
    assert.throws(() => loadSettings({ SVC_TEMPORAL_CONNECT_TIMEOUT_MS: bad }), SettingsError, bad);
});

test('autonomous.preparation_retry_initial_seconds: default 2 s (the former constant), 0.1 s to 600 s', () => {
  assert.equal(retryTiming(loadSettings({})).preparationRetryInitialSeconds, 2);
  const short = loadSettings({ SVC_AUTONOMOUS__PREPARATION_RETRY_INITIAL_SECONDS: '0.2' });
  assert.equal(retryTiming(short).preparationRetryInitialSeconds, 0.2);
  for (const bad of ['0', '0.05', '601', 'x'])
    assert.throws(
      () => loadSettings({ SVC_AUTONOMOUS__PREPARATION_RETRY_INITIAL_SECONDS: bad }),
      SettingsError,
      bad,
    );
});
