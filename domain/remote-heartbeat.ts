// When an agent request must write the machine's heartbeat. Every agent request counts as a heartbeat
// (PROTOCOL.md), but writing it on every request costs a committed UPDATE on the hot paths (the long
// poll, and every batch of CLI output before it is appended): measured in bench/remote as one more
// fsync-bound commit in front of each output line on PostgreSQL. A heartbeat younger than
// HEARTBEAT_WRITE_EVERY_MS, on a machine stored `online` with the same agent version and address, is
// not written again: the stored time is then at most that much older than the truth, against an
// offline threshold of minutes (settings agent.offline_after_seconds, at least 10 s).
export const HEARTBEAT_WRITE_EVERY_MS = 1_000;

export interface StoredHeartbeat {
  status: string;
  lastHeartbeat: Date | null;
  agentVersion: string | null;
  ipAddress: string | null;
}

export function heartbeatNeedsWrite(
  stored: StoredHeartbeat,
  now: Date,
  facts: { agentVersion?: string; ipAddress?: string | null },
): boolean {
  if (stored.status !== 'online' || !stored.lastHeartbeat) return true;
  const age = now.getTime() - stored.lastHeartbeat.getTime();
  if (age < 0 || age >= HEARTBEAT_WRITE_EVERY_MS) return true;
  if (facts.agentVersion && facts.agentVersion.slice(0, 50) !== stored.agentVersion) return true;
  if (facts.ipAddress && facts.ipAddress.slice(0, 64) !== stored.ipAddress) return true;
  return false;
}
