// Org-sync reconciliation, pure (spec document 2, "Organization sync and alert webhooks" items 1-2):
// given the platform's snapshot and the local state, what to write. Three tables, three functions:
//
//   teams        reconcileTeams: each department of the snapshot is one team of the sync tenant with
//                managed_by = the platform and external_id = the department id: created when missing,
//                renamed (or re-parented) when the platform's name changed. Teams whose department
//                vanished are KEPT exactly as they are (not deleted, not deactivated: spec item 2);
//                local teams (managed_by null) and other platforms' teams are never looked at.
//   users        reconcileUsers: each platform user resolves to one local user, in this order:
//                  1. an existing sso_identities link (provider_name = the platform) -> that user, if it
//                     is a live user of the sync tenant (else skipped, with the reason: a link never
//                     moves a user between tenants, and a deleted user is not brought back);
//                  2. a live local user of the sync tenant with the same email (case-insensitive), not a
//                     system administrator and not yet linked to another identity of this platform ->
//                     linked;
//                  3. otherwise provisioned (while the tenant's max_users leaves a seat, else skipped): username from the email's local part, else the platform id
//                     (made unique: base, base-2, base-3, ...), role `user`, the sync tenant, the email,
//                     an unusable random password (the platform gives no login: spec item 2), then linked.
//                Users are never deleted or disabled, whatever vanished.
//   memberships  reconcileMemberships: in the platform's teams, a user is a member of exactly the teams of
//                their departments in the snapshot. Rows the sync added (managed_by = the platform) are
//                added and removed to match; rows added locally (managed_by null) are never removed, and
//                count as present. departedMemberships: the platform's rows of users who are no longer
//                in the snapshot at all are removed (the user is kept).
import type { Platform, PlatformDepartment, PlatformUser } from './platform.ts';

// ---- teams -------------------------------------------------------------------------------------

export interface LocalPlatformTeam {
  id: number;
  externalId: string;
  name: string;
  parentExternalId: string | null;
}

export interface TeamPlan {
  create: { externalId: string; name: string; parentExternalId: string | null }[];
  update: { teamId: number; name: string; parentExternalId: string | null }[];
  unchanged: number;
  /** Teams of departments no longer in the snapshot: kept as they are. */
  kept: number;
}

export const MAX_TEAM_NAME = 200;

export function reconcileTeams(
  departments: readonly PlatformDepartment[],
  local: readonly LocalPlatformTeam[],
): TeamPlan {
  const byExternal = new Map(local.map((t) => [t.externalId, t]));
  const seen = new Set<string>();
  const plan: TeamPlan = { create: [], update: [], unchanged: 0, kept: 0 };
  for (const d of departments) {
    if (seen.has(d.id)) continue;
    seen.add(d.id);
    const name = (d.name.trim() || d.id).slice(0, MAX_TEAM_NAME);
    const existing = byExternal.get(d.id);
    if (!existing) plan.create.push({ externalId: d.id, name, parentExternalId: d.parentId });
    else if (existing.name !== name || existing.parentExternalId !== d.parentId)
      plan.update.push({ teamId: existing.id, name, parentExternalId: d.parentId });
    else plan.unchanged++;
  }
  for (const t of local) if (!seen.has(t.externalId)) plan.kept++;
  return plan;
}

// ---- users -------------------------------------------------------------------------------------

export interface LocalUserRef {
  id: number;
  username: string;
  email: string | null;
  tenantId: number | null;
  /** platform_admin / legacy admin: never linked by email. */
  systemAdmin: boolean;
  deleted: boolean;
}

export interface UserPlanInput {
  tenantId: number;
  users: readonly PlatformUser[];
  /** Existing links of this platform: platform user id -> the linked user. */
  linked: ReadonlyMap<string, LocalUserRef>;
  /** Live local users by lower-cased email. */
  byEmail: ReadonlyMap<string, readonly LocalUserRef[]>;
  /** Local user ids that already carry an identity of this platform. */
  usersLinkedOnPlatform: ReadonlySet<number>;
  /** Every existing username that a candidate of this chunk could collide with (see usernameBase). */
  takenUsernames: ReadonlySet<string>;
  /** How many more users the tenant's max_users allows (Infinity: no limit). */
  seatsLeft: number;
}

export type UserDecision =
  | { kind: 'existing'; platformUserId: string; userId: number }
  | { kind: 'link'; platformUserId: string; userId: number; via: 'email' }
  | { kind: 'provision'; platformUserId: string; username: string; email: string | null }
  | { kind: 'skip'; platformUserId: string; reason: string };

const MAX_BASE = 60;
const EMAIL_SHAPE = /^[^\s@]{1,64}@[^\s@]{1,190}$/;

/** A plausible email address, lower-cased; null for anything else. */
export function normalEmail(email: string | null | undefined): string | null {
  if (!email) return null;
  const e = email.trim().toLowerCase();
  return e.length <= 255 && EMAIL_SHAPE.test(e) ? e : null;
}

const sanitize = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '')
    .replace(/^[._-]+/, '')
    .slice(0, MAX_BASE);

/** The username a platform user starts from: email local part, else the platform id, else `user`. */
export function usernameBase(u: Pick<PlatformUser, 'email' | 'id'>): string {
  const email = normalEmail(u.email);
  const fromEmail = email ? sanitize(email.slice(0, email.indexOf('@'))) : '';
  if (fromEmail) return fromEmail;
  const fromId = sanitize(u.id);
  return fromId || 'user';
}

/** The first of base, base-2, base-3, ... not taken (terminates: `taken` is finite). */
export function uniqueUsername(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

export function reconcileUsers(input: UserPlanInput): UserDecision[] {
  const taken = new Set(input.takenUsernames);
  const linkedNow = new Set(input.usersLinkedOnPlatform);
  const decided = new Set<string>();
  let seats = input.seatsLeft;
  const out: UserDecision[] = [];
  for (const u of input.users) {
    if (decided.has(u.id)) continue;
    decided.add(u.id);
    const link = input.linked.get(u.id);
    if (link) {
      if (link.deleted) out.push({ kind: 'skip', platformUserId: u.id, reason: 'linked user was deleted' });
      else if (link.tenantId !== input.tenantId)
        out.push({ kind: 'skip', platformUserId: u.id, reason: 'linked user belongs to another tenant' });
      else out.push({ kind: 'existing', platformUserId: u.id, userId: link.id });
      continue;
    }
    const email = normalEmail(u.email);
    const match = email
      ? (input.byEmail.get(email) ?? [])
          .filter(
            (c) => !c.deleted && !c.systemAdmin && c.tenantId === input.tenantId && !linkedNow.has(c.id),
          )
          .sort((a, b) => a.id - b.id)[0]
      : undefined;
    if (match) {
      linkedNow.add(match.id);
      out.push({ kind: 'link', platformUserId: u.id, userId: match.id, via: 'email' });
      continue;
    }
    if (seats <= 0) {
      out.push({ kind: 'skip', platformUserId: u.id, reason: 'tenant user limit reached' });
      continue;
    }
    seats--;
    const username = uniqueUsername(usernameBase(u), taken);
    taken.add(username);
    out.push({ kind: 'provision', platformUserId: u.id, username, email });
  }
  return out;
}

// ---- memberships -------------------------------------------------------------------------------

export interface MembershipRow {
  teamId: number;
  userId: number;
  /** null: added locally, never removed by a sync. */
  managedBy: string | null;
}

export interface MembershipPlan {
  add: { teamId: number; userId: number }[];
  remove: { teamId: number; userId: number }[];
}

/**
 * `desired`: for each user of the chunk, the platform team ids of their departments in the snapshot.
 * `current`: every membership those users have in this platform's teams of the sync tenant.
 */
export function reconcileMemberships(
  platform: Platform,
  desired: ReadonlyMap<number, ReadonlySet<number>>,
  current: readonly MembershipRow[],
): MembershipPlan {
  const plan: MembershipPlan = { add: [], remove: [] };
  const have = new Map<number, Map<number, MembershipRow>>();
  for (const m of current) {
    const teams = have.get(m.userId) ?? new Map<number, MembershipRow>();
    teams.set(m.teamId, m);
    have.set(m.userId, teams);
  }
  for (const [userId, want] of desired) {
    const rows = have.get(userId) ?? new Map<number, MembershipRow>();
    for (const teamId of want) if (!rows.has(teamId)) plan.add.push({ teamId, userId });
    for (const [teamId, row] of rows)
      if (!want.has(teamId) && row.managedBy === platform) plan.remove.push({ teamId, userId });
  }
  return plan;
}

/** The platform's membership rows of users that are no longer in the snapshot (the users stay). */
export function departedMemberships(
  platform: Platform,
  current: readonly MembershipRow[],
  presentUserIds: ReadonlySet<number>,
): MembershipPlan['remove'] {
  return current
    .filter((m) => m.managedBy === platform && !presentUserIds.has(m.userId))
    .map(({ teamId, userId }) => ({ teamId, userId }));
}

// ---- counts ------------------------------------------------------------------------------------

/** What a run did, stored in org_sync_runs.counts and answered by GET .../sync/<run_id>. */
export interface OrgSyncCounts {
  departments: number;
  users: number;
  teams_created: number;
  teams_updated: number;
  teams_kept: number;
  users_provisioned: number;
  users_linked: number;
  users_skipped: number;
  memberships_added: number;
  memberships_removed: number;
}

export const emptyCounts = (): OrgSyncCounts => ({
  departments: 0,
  users: 0,
  teams_created: 0,
  teams_updated: 0,
  teams_kept: 0,
  users_provisioned: 0,
  users_linked: 0,
  users_skipped: 0,
  memberships_added: 0,
  memberships_removed: 0,
});

export function addCounts(a: OrgSyncCounts, b: Partial<OrgSyncCounts>): OrgSyncCounts {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof OrgSyncCounts)[]) out[k] += b[k] ?? 0;
  return out;
}
