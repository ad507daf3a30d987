// domain/remote-heartbeat.ts: a heartbeat is written at once when the stored row must change (not
// online, never written, in the future, another agent version or address, or a third of the offline
// threshold old), written behind when the stored one is a second old or more, and otherwise not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  HEARTBEAT_FLUSH_MS,
  HEARTBEAT_WRITE_EVERY_MS,
  heartbeatWrite,
} from '../../domain/remote-heartbeat.ts';

const now = new Date('2026-11-24T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const OFFLINE_AFTER = 180_000;
const stored = { status: 'online', lastHeartbeat: ago(200), agentVersion: '1.2.0', ipAddress: '10.0.0.5' };
const write = (s: typeof stored | Record<string, unknown>, facts = {}) =>
  heartbeatWrite(s as typeof stored, now, facts, OFFLINE_AFTER);

test('a fresh heartbeat of an online machine with the same facts is not written again', () => {
  assert.equal(write(stored), 'none');
  assert.equal(write(stored, { agentVersion: '1.2.0', ipAddress: '10.0.0.5' }), 'none');
  assert.equal(write({ ...stored, lastHeartbeat: ago(HEARTBEAT_WRITE_EVERY_MS - 1) }), 'none');
});

test('a second old or more, up to a third of the offline threshold: written behind', () => {
  assert.equal(write({ ...stored, lastHeartbeat: ago(HEARTBEAT_WRITE_EVERY_MS) }), 'behind');
  assert.equal(write({ ...stored, lastHeartbeat: ago(25_000) }), 'behind', 'an idle agent’s next poll');
  assert.equal(write({ ...stored, lastHeartbeat: ago(OFFLINE_AFTER / 3 - 1) }), 'behind');
  // Written behind within HEARTBEAT_FLUSH_MS: the stored one is then still well inside the threshold.
  assert.ok(OFFLINE_AFTER / 3 + HEARTBEAT_FLUSH_MS < OFFLINE_AFTER);
});

test('at once: not online, never written, in the future, the facts changed, or a third of the threshold old', () => {
  assert.equal(write({ ...stored, status: 'offline' }), 'now');
  assert.equal(write({ ...stored, lastHeartbeat: null }), 'now');
  assert.equal(write({ ...stored, lastHeartbeat: ago(-5_000) }), 'now');
  assert.equal(write(stored, { agentVersion: '1.3.0' }), 'now');
  assert.equal(write(stored, { ipAddress: '10.0.0.6' }), 'now');
  assert.equal(write({ ...stored, lastHeartbeat: ago(OFFLINE_AFTER / 3) }), 'now');
  // The threshold follows the setting (agent.offline_after_seconds, at least 10 s).
  assert.equal(
    heartbeatWrite({ ...stored, lastHeartbeat: ago(4_000) }, now, {}, 10_000),
    'now',
    'a 10 s threshold: 4 s is more than a third',
  );
});
