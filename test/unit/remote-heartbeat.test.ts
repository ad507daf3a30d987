// domain/remote-heartbeat.ts: a heartbeat is written when the stored one is a second old or more, when
// the machine is not stored online, and when the agent version or address changed; otherwise not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HEARTBEAT_WRITE_EVERY_MS, heartbeatNeedsWrite } from '../../domain/remote-heartbeat.ts';

const now = new Date('2026-11-24T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const stored = { status: 'online', lastHeartbeat: ago(200), agentVersion: '1.2.0', ipAddress: '10.0.0.5' };

test('a fresh heartbeat of an online machine with the same facts is not written again', () => {
  assert.equal(heartbeatNeedsWrite(stored, now, {}), false);
  assert.equal(heartbeatNeedsWrite(stored, now, { agentVersion: '1.2.0', ipAddress: '10.0.0.5' }), false);
  assert.equal(
    heartbeatNeedsWrite({ ...stored, lastHeartbeat: ago(HEARTBEAT_WRITE_EVERY_MS - 1) }, now, {}),
    false,
  );
});

test('written when old enough, not online, never written, in the future, or the facts changed', () => {
  assert.equal(
    heartbeatNeedsWrite({ ...stored, lastHeartbeat: ago(HEARTBEAT_WRITE_EVERY_MS) }, now, {}),
    true,
  );
  assert.equal(heartbeatNeedsWrite({ ...stored, status: 'offline' }, now, {}), true);
  assert.equal(heartbeatNeedsWrite({ ...stored, lastHeartbeat: null }, now, {}), true);
  assert.equal(heartbeatNeedsWrite({ ...stored, lastHeartbeat: ago(-5_000) }, now, {}), true);
  assert.equal(heartbeatNeedsWrite(stored, now, { agentVersion: '1.3.0' }), true);
  assert.equal(heartbeatNeedsWrite(stored, now, { ipAddress: '10.0.0.6' }), true);
});
