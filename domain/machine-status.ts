// Machine status from heartbeats, pure (spec: offline after 180 s without a heartbeat; polls count).
// The threshold is the setting `agent.offline_after_seconds` (default 180); callers pass
// offlineAfterMs(settings.agent).

export const OFFLINE_AFTER_MS = 180_000;

export type MachineStatus = 'online' | 'offline';

/** The offline threshold in milliseconds from the `agent` settings section. */
export const offlineAfterMs = (agent: { offline_after_seconds: number }): number =>
  agent.offline_after_seconds * 1000;

export function machineStatus(
  lastHeartbeat: Date | null | undefined,
  now: Date,
  offlineAfter = OFFLINE_AFTER_MS,
): MachineStatus {
  if (!lastHeartbeat) return 'offline';
  return now.getTime() - lastHeartbeat.getTime() < offlineAfter ? 'online' : 'offline';
}

/**
 * Whether the stored `remote_machines.status` lags behind the heartbeat: it still says online but the
 * machine is past the threshold. Such rows are written back as offline when a reader sees them.
 */
export const storedStatusIsStale = (
  m: { status: string; lastHeartbeat: Date | null | undefined },
  now: Date,
  offlineAfter = OFFLINE_AFTER_MS,
): boolean => m.status === 'online' && machineStatus(m.lastHeartbeat, now, offlineAfter) === 'offline';
