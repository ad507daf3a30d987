// Remote session lifecycle, pure (spec document 1, "States and transitions: Remote session"). The
// session workflow applies these transitions; the API uses them to answer 409 before a round trip.

export type RemoteSessionStatus = 'active' | 'paused' | 'stopped' | 'completed';
export type RemoteSessionEvent = 'pause' | 'resume' | 'stop' | 'cli_exited' | 'machine_removed';

const TRANSITIONS: Readonly<
  Record<RemoteSessionEvent, Partial<Record<RemoteSessionStatus, RemoteSessionStatus>>>
> = {
  pause: { active: 'paused' },
  resume: { paused: 'active' },
  stop: { active: 'stopped', paused: 'stopped' },
  // The CLI ended by itself (or the agent refused to start it): the session is over but not stopped.
  cli_exited: { active: 'completed', paused: 'completed' },
  machine_removed: { active: 'stopped', paused: 'stopped' },
};

export type TransitionResult = { ok: true; next: RemoteSessionStatus } | { ok: false; reason: string };

export function transition(status: RemoteSessionStatus, event: RemoteSessionEvent): TransitionResult {
  const next = TRANSITIONS[event][status];
  if (next) return { ok: true, next };
  return { ok: false, reason: `cannot ${event.replace('_', ' ')} a session that is ${status}` };
}

export const isTerminal = (status: string): boolean => status === 'stopped' || status === 'completed';

/** Chat, abort, model and permission answers need a live CLI (a paused one reads its stdin on resume). */
export const acceptsCommands = (status: string): boolean => status === 'active' || status === 'paused';

/** Proxy-token revocation reason for the event that ended a session. */
export const revocationReason = (event: RemoteSessionEvent): 'stopped' | 'completed' =>
  event === 'cli_exited' ? 'completed' : 'stopped';

/**
 * When to rotate a proxy token: at 80 % of its lifetime, and never later than 5 minutes before expiry,
 * so the agent has time to restart the CLI between turns before the old token stops working. The
 * margin is at most half the lifetime: a short configured lifetime (settings.remote) rotates at half
 * time instead of at once, which would rotate again and again without pause.
 */
export function rotationDueAt(issuedAtMs: number, expiresAtMs: number): number {
  const lifetime = Math.max(0, expiresAtMs - issuedAtMs);
  const margin = Math.max(Math.min(5 * 60_000, lifetime / 2), lifetime * 0.2);
  return issuedAtMs + Math.floor(lifetime - margin);
}
