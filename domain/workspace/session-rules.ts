// Workspace session rules, pure (spec document 2, "Workspace (prompts and sessions)", "Messages and
// agent sessions", tenant_quotas.max_sessions_per_user). Local sessions live in agent_sessions with
// workspace_type 'local'; remote ones (/api/remote/sessions) are not these.
import { ConflictError, TooManyRequestsError } from '../errors.ts';

export const SESSION_DEFAULTS = { sessionType: 'chat', hostName: 'localhost', expiresInHours: 24 } as const;
export const MAX_EXPIRES_IN_HOURS = 720;
/** tenant_quotas.max_sessions_per_user when the tenant has no quota row (spec default). */
export const DEFAULT_MAX_SESSIONS_PER_USER = 5;

export type StoredStatus = string;
export type EffectiveStatus = 'active' | 'completed' | 'expired' | string;

/** An active session past its expiry reads as `expired` (the row is updated lazily). */
export function effectiveStatus(status: StoredStatus, expiresAt: Date | null, now: Date): EffectiveStatus {
  if (status === 'active' && expiresAt != null && expiresAt.getTime() <= now.getTime()) return 'expired';
  return status;
}

/** Messages and completion need a live session: 409 naming why not. */
export function assertWritable(status: EffectiveStatus) {
  if (status === 'active') return;
  if (status === 'expired') throw new ConflictError('Session has expired');
  if (status === 'completed') throw new ConflictError('Session is completed');
  throw new ConflictError(`Session is ${status}`);
}

/** The tenant's max_sessions_per_user counts the user's active, unexpired local sessions. */
export function assertSessionCapacity(active: number, max: number) {
  if (active >= max)
    throw new TooManyRequestsError(`Active session limit reached: at most ${max} active sessions per user`, {
      max_sessions_per_user: max,
      active_sessions: active,
    });
}

/**
 * A project path as stored: trimmed, trailing separators removed (except a lone root). Two sessions
 * naming `/src/app/` and `/src/app` share one project.
 */
export function normalizeProjectPath(raw: string): string {
  const p = raw.trim();
  let end = p.length;
  while (end > 1 && (p[end - 1] === '/' || p[end - 1] === '\\')) end--;
  return p.slice(0, end);
}

/** The default project name: the last path segment. */
export function projectNameOf(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return (parts[parts.length - 1] ?? path).slice(0, 200);
}
