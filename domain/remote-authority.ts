// The remote workspace authority table (spec document 1, "Remote workspace authority"), pure. Routes
// compute the caller's standing on a machine once and ask these functions; none re-implements a row.
import { isSystemAdmin } from './access.ts';

export type MachinePermission = 'user' | 'admin';
/** What the caller is to one machine, strongest first. */
export type MachineStanding = 'system_admin' | 'machine_admin' | 'assigned_user' | 'none';

export const MACHINE_PERMISSIONS: readonly MachinePermission[] = ['user', 'admin'];
export const isMachinePermission = (v: unknown): v is MachinePermission => v === 'user' || v === 'admin';

export function machineStanding(
  user: { role: string },
  assignment: MachinePermission | null | undefined,
): MachineStanding {
  if (isSystemAdmin(user)) return 'system_admin';
  if (assignment === 'admin') return 'machine_admin';
  if (assignment === 'user') return 'assigned_user';
  return 'none';
}

/** One row per action of the spec table, plus the two read actions the endpoint table implies. */
export type RemoteAction =
  | 'create_session'
  | 'manage_own_sessions'
  | 'view_or_stop_others_sessions'
  | 'assign_regular_user'
  | 'revoke_regular_user'
  | 'grant_admin'
  | 'revoke_admin'
  | 'unregister_machine'
  | 'generate_registration_token'
  | 'manage_stored_api_keys'
  | 'view_machine'
  | 'list_machine_users';

type Row = Readonly<Record<MachineStanding, boolean>>;
const row = (system_admin: boolean, machine_admin: boolean, assigned_user: boolean): Row => ({
  system_admin,
  machine_admin,
  assigned_user,
  none: false,
});

/** The table itself. `none` is never allowed anything: users may access only their own sessions. */
export const REMOTE_AUTHORITY: Readonly<Record<RemoteAction, Row>> = {
  create_session: row(true, true, true),
  manage_own_sessions: row(true, true, true),
  view_or_stop_others_sessions: row(true, true, false),
  assign_regular_user: row(true, true, false),
  revoke_regular_user: row(true, true, false),
  grant_admin: row(true, false, false),
  // "Revoke regular users: machine admin yes (never an `admin` user)".
  revoke_admin: row(true, false, false),
  unregister_machine: row(true, false, false),
  generate_registration_token: row(true, false, false),
  manage_stored_api_keys: row(true, false, false),
  view_machine: row(true, true, true),
  list_machine_users: row(true, true, false),
};

export const mayPerform = (action: RemoteAction, standing: MachineStanding): boolean =>
  REMOTE_AUTHORITY[action][standing];

export type AssignmentDecision = { allowed: true; stored: MachinePermission } | { allowed: false };

/**
 * Assigning a user. A machine admin may assign, but whatever it asks for is stored as `user` (the spec:
 * "when the caller is a machine admin the stored permission is forced to user").
 */
export function decideAssignment(
  standing: MachineStanding,
  requested: MachinePermission,
): AssignmentDecision {
  if (!mayPerform('assign_regular_user', standing)) return { allowed: false };
  if (requested === 'admin' && !mayPerform('grant_admin', standing)) return { allowed: true, stored: 'user' };
  return { allowed: true, stored: requested };
}

/** Revoking an assignment whose stored permission is `target`. */
export function mayRevoke(standing: MachineStanding, target: MachinePermission): boolean {
  return mayPerform(target === 'admin' ? 'revoke_admin' : 'revoke_regular_user', standing);
}

/**
 * Seeing or steering a session: its owner (own sessions), or whoever may view other users' sessions on
 * the session's machine. Anything else is hidden, and the API answers 404 so existence is not revealed.
 */
export function maySeeSession(standing: MachineStanding, isOwner: boolean): boolean {
  if (isOwner) return true;
  return mayPerform('view_or_stop_others_sessions', standing);
}

export type TerminalAccess = 'owner_and_admins' | 'admins' | 'off';

/**
 * Opening a session's terminal (settings remote.terminal_access): on top of seeing the session, the
 * setting may narrow it to machine and system admins, or close it for everyone.
 */
export function mayOpenTerminal(
  standing: MachineStanding,
  isOwner: boolean,
  access: TerminalAccess,
): boolean {
  if (access === 'off' || !maySeeSession(standing, isOwner)) return false;
  if (access === 'admins') return standing === 'system_admin' || standing === 'machine_admin';
  return true;
}
