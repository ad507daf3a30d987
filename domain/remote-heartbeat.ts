// When an agent request writes the machine's heartbeat, and how. Every agent request counts as a
// heartbeat (PROTOCOL.md), but a committed UPDATE on every request is the hot paths' largest fixed
// cost (the long poll, every batch of CLI output; with 1,000 idle agents a few per cent of a core).
//   - `now`: the stored row must change at once: the machine is not stored `online`, has no heartbeat,
//     reports another agent version or address, or its stored heartbeat is a third of the offline
//     threshold old (so a heartbeat written behind never lets a reader see an agent that is polling
//     as offline), or in the future (a clock change).
//   - `behind`: the stored one is a second old or more: kept per instance and written within
//     HEARTBEAT_FLUSH_MS (services/remote-heartbeats.ts), with the request's exact time, so the stored
//     heartbeat is the truth once written and the offline rule ("180 s without a heartbeat") is exact.
//   - `none`: written less than a second ago.
export const HEARTBEAT_WRITE_EVERY_MS = 1_000;
/** How often the heartbeats written behind reach the database. */
export const HEARTBEAT_FLUSH_MS = 2_000;

export interface StoredHeartbeat {
  status: string;
  lastHeartbeat: Date | null;
  agentVersion: string | null;
  ipAddress: string | null;
}

export type HeartbeatWrite = 'now' | 'behind' | 'none';

export function heartbeatWrite(
  stored: StoredHeartbeat,
  now: Date,
  facts: { agentVersion?: string; ipAddress?: string | null },
  offlineAfterMs: number,
): HeartbeatWrite {
  if (stored.status !== 'online' || !stored.lastHeartbeat) return 'now';
  if (facts.agentVersion && facts.agentVersion.slice(0, 50) !== stored.agentVersion) return 'now';
  if (facts.ipAddress && facts.ipAddress.slice(0, 64) !== stored.ipAddress) return 'now';
  const age = now.getTime() - stored.lastHeartbeat.getTime();
  if (age < 0 || age >= offlineAfterMs / 3) return 'now';
  return age >= HEARTBEAT_WRITE_EVERY_MS ? 'behind' : 'none';
}
