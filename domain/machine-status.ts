// Machine status from heartbeats, pure (spec: offline after 180 s without a heartbeat; polls count).

export const OFFLINE_AFTER_MS = 180_000;

export type MachineStatus = 'online' | 'offline';

export function machineStatus(
  lastHeartbeat: Date | null | undefined,
  now: Date,
  offlineAfterMs = OFFLINE_AFTER_MS,
): MachineStatus {
  if (!lastHeartbeat) return 'offline';
  return now.getTime() - lastHeartbeat.getTime() < offlineAfterMs ? 'online' : 'offline';
}
