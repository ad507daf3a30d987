// Pure remote-workspace rules: machine status from heartbeats, the session state machine, when a proxy
// token is rotated, the CLI tool -> provider mapping, and sealed command payloads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveFernetKey } from '../../domain/crypto/fernet.ts';
import { machineStatus, OFFLINE_AFTER_MS } from '../../domain/machine-status.ts';
import {
  decideAssignment,
  machineStanding,
  mayRevoke,
  maySeeSession,
} from '../../domain/remote-authority.ts';
import { providerForCliTool } from '../../domain/remote-cli-tools.ts';
import { openPayload, sealPayload } from '../../domain/remote-command-payload.ts';
import { rotationDueAt, transition } from '../../domain/remote-session-state.ts';

test('machine status: online below 180 s since the last heartbeat, offline from 180 s or without one', () => {
  const now = new Date('2030-01-01T00:03:00Z');
  assert.equal(OFFLINE_AFTER_MS, 180_000);
  assert.equal(machineStatus(null, now), 'offline');
  assert.equal(machineStatus(new Date(now.getTime() - 179_999), now), 'online');
  assert.equal(machineStatus(new Date(now.getTime() - 180_000), now), 'offline');
});

test('session transitions', () => {
  assert.deepEqual(transition('active', 'pause'), { ok: true, next: 'paused' });
  assert.deepEqual(transition('paused', 'resume'), { ok: true, next: 'active' });
  assert.deepEqual(transition('paused', 'stop'), { ok: true, next: 'stopped' });
  assert.deepEqual(transition('active', 'cli_exited'), { ok: true, next: 'completed' });
  for (const [from, event] of [
    ['paused', 'pause'],
    ['active', 'resume'],
    ['stopped', 'stop'],
    ['completed', 'resume'],
    ['stopped', 'cli_exited'],
  ] as const)
    assert.equal(transition(from, event).ok, false, `${event} from ${from}`);
});

test('token rotation at 80 % of the lifetime, at least 5 minutes before expiry', () => {
  const h4 = 4 * 3600_000;
  assert.equal(rotationDueAt(0, h4), h4 * 0.8);
  assert.equal(rotationDueAt(0, 15 * 60_000), 10 * 60_000);
  assert.equal(rotationDueAt(0, 2 * 60_000), 60_000, 'a lifetime under 10 minutes rotates at half time');
  assert.equal(rotationDueAt(0, 60_000), 30_000, 'never at once, which would rotate without pause');
});

test('authority helpers: standing, forced user grants, admin revocation, session visibility', () => {
  assert.equal(machineStanding({ role: 'platform_admin' }, null), 'system_admin');
  assert.equal(
    machineStanding({ role: 'tenant_admin' }, null),
    'none',
    'tenant admins are not system admins',
  );
  assert.equal(machineStanding({ role: 'user' }, 'admin'), 'machine_admin');
  assert.deepEqual(decideAssignment('machine_admin', 'admin'), { allowed: true, stored: 'user' });
  assert.deepEqual(decideAssignment('system_admin', 'admin'), { allowed: true, stored: 'admin' });
  assert.deepEqual(decideAssignment('assigned_user', 'user'), { allowed: false });
  assert.equal(mayRevoke('machine_admin', 'admin'), false);
  assert.equal(mayRevoke('machine_admin', 'user'), true);
  assert.equal(maySeeSession('assigned_user', false), false);
  assert.equal(maySeeSession('assigned_user', true), true);
  assert.equal(maySeeSession('machine_admin', false), true);
});

test('provider for the proxy token follows the CLI adapter mapping', () => {
  assert.equal(providerForCliTool('cli_alpha'), 'openai');
  assert.equal(providerForCliTool('cli_beta'), 'anthropic');
  assert.equal(providerForCliTool('cli_gamma'), 'openai');
  assert.equal(providerForCliTool('my-own-cli'), 'openai', 'generic adapter');
});

test('sealed payloads keep the proxy token encrypted at rest', () => {
  const key = deriveFernetKey('k');
  const sealed = sealPayload({ proxy_token: 'svcpt_secret', model: 'm' }, key);
  assert.ok(!sealed.includes('svcpt_secret'));
  assert.deepEqual(openPayload(sealed, key), { proxy_token: 'svcpt_secret', model: 'm' });
  assert.throws(() => openPayload(sealed, deriveFernetKey('other')));
});
