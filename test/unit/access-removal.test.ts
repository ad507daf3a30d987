// Pure rules behind issue 8 items 11 and 15: who may log in without a tenant, when the stored machine
// status lags behind the heartbeat, and how the settings' token lifetimes become per-type overrides.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { proxyTokenTtlSeconds } from '../../domain/crypto/proxy-token.ts';
import { offlineAfterMs, storedStatusIsStale } from '../../domain/machine-status.ts';
import { NO_TENANT_REFUSAL, noTenantRefusal } from '../../domain/tenants.ts';
import { proxyTokenTtlOverrides } from '../../services/proxy-tokens.ts';

test('without a tenant only system administrators may log in', () => {
  for (const role of ['user', 'manager', 'readonly', 'tenant_admin'])
    assert.equal(noTenantRefusal({ role, tenantId: null }), NO_TENANT_REFUSAL, role);
  for (const role of ['platform_admin', 'admin'])
    assert.equal(noTenantRefusal({ role, tenantId: null }), null);
  assert.equal(noTenantRefusal({ role: 'user', tenantId: 7 }), null);
});

test('the stored status is stale when it says online past the threshold', () => {
  const now = new Date(1_000_000);
  const ms = offlineAfterMs({ offline_after_seconds: 30 });
  assert.equal(ms, 30_000);
  const at = (agoMs: number) => new Date(now.getTime() - agoMs);
  assert.equal(storedStatusIsStale({ status: 'online', lastHeartbeat: at(29_999) }, now, ms), false);
  assert.equal(storedStatusIsStale({ status: 'online', lastHeartbeat: at(30_000) }, now, ms), true);
  assert.equal(storedStatusIsStale({ status: 'online', lastHeartbeat: null }, now, ms), true);
  assert.equal(storedStatusIsStale({ status: 'offline', lastHeartbeat: at(90_000) }, now, ms), false);
  assert.equal(
    storedStatusIsStale({ status: 'online', lastHeartbeat: at(179_000) }, now),
    false,
    '180 s default',
  );
});

test('settings minutes become per-type TTL overrides in seconds', () => {
  const o = proxyTokenTtlOverrides({
    proxy_token_ttl_general_minutes: 240,
    proxy_token_ttl_ha_pool_minutes: 15,
  });
  assert.deepEqual(o, { general: 14_400, ha_pool: 900 });
  const low = proxyTokenTtlOverrides({
    proxy_token_ttl_general_minutes: 2,
    proxy_token_ttl_ha_pool_minutes: 1,
  });
  assert.equal(proxyTokenTtlSeconds('general', low), 120);
  assert.equal(proxyTokenTtlSeconds('ha_pool', low), 60);
});
