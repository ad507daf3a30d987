// The activities of workflows/orgsync/sync.ts. Inputs and results are ids, cursors and counts; the
// platform snapshot goes through the database (org_sync_items, keyed by run id) and the app secret is
// read from settings here, never passed in. Platform failures map to Temporal failures by kind
// (assertExhaustive: a new kind cannot fall through):
//   rate_limited -> retryable `OrgSyncRateLimited`, with nextRetryDelay = the platform's hint;
//   unavailable  -> retryable `OrgSyncUnavailable` (the workflow's backoff);
//   auth         -> non-retryable `OrgSyncAuthFailed`;
//   rejected     -> non-retryable `OrgSyncRejected`.
// A missing configuration or tenant is non-retryable `OrgSyncNotConfigured` / `OrgSyncBadTenant`.
// Messages carry the platform's scrubbed errmsg (services/orgsync/platform-http.ts), never the secret.
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { orgDirectoryUsersRepository } from '../../db/repositories/orgsync/directory-users.ts';
import { orgSyncRunsRepository } from '../../db/repositories/orgsync/runs.ts';
import { orgSyncSnapshotRepository } from '../../db/repositories/orgsync/snapshot.ts';
import { orgTeamsRepository } from '../../db/repositories/orgsync/teams.ts';
import { ssoIdentitiesRepository } from '../../db/repositories/sso-identities.ts';
import { recountTenantUsers, tenantsRepository } from '../../db/repositories/tenants.ts';
import { type Platform, PlatformApiError } from '../../domain/orgsync/platform.ts';
import {
  departedMemberships,
  type OrgSyncCounts,
  reconcileMemberships,
  reconcileTeams,
  reconcileUsers,
  usernameBase,
} from '../../domain/orgsync/reconcile.ts';
import { hashPassword } from '../../domain/passwords.ts';
import { unusablePasswordHash } from '../../domain/sso/unusable-password.ts';
import { orgDirectory, platformCredentials, platformSettings } from '../../services/orgsync/directories.ts';
import { writeDisplayNames } from '../../services/orgsync/display-names.ts';
import type { ActivityDeps } from '../deps.ts';

export interface OrgSyncRunRef {
  runId: string;
  platform: Platform;
  tenantId: number;
}

function assertExhaustive(x: never): never {
  throw new Error(`unhandled platform error kind ${String(x)}`);
}

/** A platform error as the Temporal failure the workflow's retry policy acts on. */
export function toFailure(err: unknown): unknown {
  if (!(err instanceof PlatformApiError)) return err;
  switch (err.kind) {
    case 'rate_limited':
      return ApplicationFailure.create({
        message: err.message,
        type: 'OrgSyncRateLimited',
        nonRetryable: false,
        ...(err.retryAfterMs != null ? { nextRetryDelay: Math.min(err.retryAfterMs, 10 * 60_000) } : {}),
      });
    case 'unavailable':
      return ApplicationFailure.retryable(err.message, 'OrgSyncUnavailable');
    case 'auth':
      return ApplicationFailure.nonRetryable(err.message, 'OrgSyncAuthFailed');
    case 'rejected':
      return ApplicationFailure.nonRetryable(err.message, 'OrgSyncRejected');
    default:
      return assertExhaustive(err.kind);
  }
}

const mapped = async <T>(fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (err) {
    throw toFailure(err);
  }
};

export function createOrgSyncActivities(deps: Pick<ActivityDeps, 'database' | 'settings' | 'now'>) {
  const directory = (platform: Platform) => {
    const creds = platformCredentials(deps.settings, platform);
    if (!creds)
      throw ApplicationFailure.nonRetryable(
        `${platform} is not configured (app_key/app_secret)`,
        'OrgSyncNotConfigured',
      );
    return orgDirectory(platform, creds);
  };
  const runs = () => orgSyncRunsRepository(deps.database);
  const snapshot = () => orgSyncSnapshotRepository(deps.database);

  return {
    /** Records the run as running; the department id the walk starts from. */
    async orgSyncStart(run: OrgSyncRunRef): Promise<{ rootDepartmentId: string }> {
      const dir = directory(run.platform);
      const tenant = await tenantsRepository(deps.database).findById(run.tenantId);
      if (!tenant)
        throw ApplicationFailure.nonRetryable(`tenant ${run.tenantId} does not exist`, 'OrgSyncBadTenant');
      await runs().start(run, deps.now());
      const configured = platformSettings(deps.settings, run.platform).org_sync_root_dept_id?.trim();
      return { rootDepartmentId: configured || dir.rootDepartmentId };
    },

    /** One page of direct children of `parentId`, staged; their ids (the walk goes on with them). */
    async orgSyncFetchDepartments(input: {
      runId: string;
      platform: Platform;
      rootDepartmentId: string;
      parentId: string;
      cursor: string | null;
    }): Promise<{ childIds: string[]; nextCursor: string | null }> {
      const page = await mapped(() =>
        directory(input.platform).listDepartments(input.parentId, input.cursor),
      );
      // Departments directly under the sync root have no parent team: the same on every platform.
      const items = page.items
        .filter((d) => d.id !== input.rootDepartmentId)
        .map((d) => ({ ...d, parentId: d.parentId === input.rootDepartmentId ? null : d.parentId }));
      await snapshot().putDepartments(input.runId, items);
      return { childIds: items.map((d) => d.id), nextCursor: page.nextCursor };
    },

    /** One page of the users of a department, staged; how many it held. */
    async orgSyncFetchUsers(input: {
      runId: string;
      platform: Platform;
      departmentId: string;
      cursor: string | null;
    }): Promise<{ count: number; nextCursor: string | null }> {
      const page = await mapped(() =>
        directory(input.platform).listDepartmentUsers(input.departmentId, input.cursor),
      );
      await snapshot().putUsers(input.runId, page.items);
      return { count: page.items.length, nextCursor: page.nextCursor };
    },

    /** Creates and renames the platform's teams from the staged departments. */
    async orgSyncApplyTeams(run: OrgSyncRunRef): Promise<Partial<OrgSyncCounts>> {
      const departments = await snapshot().departments(run.runId);
      return deps.database.transaction(async (tx) => {
        const teams = orgTeamsRepository({ ...deps.database, db: tx.db });
        const plan = reconcileTeams(departments, await teams.platformTeams(run.tenantId, run.platform));
        const done = await teams.applyTeamPlan(run.tenantId, run.platform, plan, deps.now());
        return {
          departments: departments.length,
          teams_created: done.created,
          teams_updated: done.updated,
          teams_kept: plan.kept,
        };
      });
    },

    /**
     * Provisions or links the next `limit` staged users after `after` (by platform id) and reconciles
     * their memberships, in one transaction; `last` is the chunk's last platform id (null: done).
     */
    async orgSyncApplyUsers(
      input: OrgSyncRunRef & { after: string | null; limit: number },
    ): Promise<{ counts: Partial<OrgSyncCounts>; last: string | null }> {
      const users = await snapshot().users(input.runId, input.after, input.limit);
      if (users.length === 0) return { counts: {}, last: null };
      const departments = new Set((await snapshot().departments(input.runId)).map((d) => d.id));
      const at = deps.now();
      const tenants = tenantsRepository(deps.database);
      const quota = await tenants.quotaOf(input.tenantId);
      // One bcrypt of random bytes per chunk: the marker makes every such hash unusable anyway.
      const passwordHash = unusablePasswordHash(await hashPassword(randomBytes(32).toString('base64url')));
      const counts = await deps.database.transaction(async (tx) => {
        const handle = { ...deps.database, db: tx.db };
        const dirUsers = orgDirectoryUsersRepository(handle);
        const teamsRepo = orgTeamsRepository(handle);
        const identities = ssoIdentitiesRepository({ ...deps.database, db: tx.db });
        const ids = users.map((u) => u.id);
        const linked = await dirUsers.linked(input.platform, ids);
        const emails = [...new Set(users.map((u) => (u.email ?? '').trim().toLowerCase()).filter(Boolean))];
        const byEmail = await dirUsers.byEmail(emails);
        const candidates = [...byEmail.values()].flat().map((u) => u.id);
        const usersLinkedOnPlatform = await dirUsers.withIdentity(input.platform, candidates);
        const takenUsernames = await dirUsers.usernamesLike(users.map(usernameBase));
        const [live] = await tx.sql.query<{ n: number }>(
          'SELECT COUNT(*) AS n FROM users WHERE tenant_id = ? AND deleted_at IS NULL',
          [input.tenantId],
        );
        const seatsLeft = quota ? quota.maxUsers - Number(live?.n ?? 0) : Number.POSITIVE_INFINITY;
        const decisions = reconcileUsers({
          tenantId: input.tenantId,
          users,
          linked,
          byEmail,
          usersLinkedOnPlatform,
          takenUsernames,
          seatsLeft,
        });
        const c: Partial<OrgSyncCounts> &
          Required<Pick<OrgSyncCounts, 'users_provisioned' | 'users_linked' | 'users_skipped'>> = {
          users: users.length,
          users_provisioned: 0,
          users_linked: 0,
          users_skipped: 0,
        };
        const userOf = new Map<string, number>();
        for (const d of decisions) {
          switch (d.kind) {
            case 'existing':
              userOf.set(d.platformUserId, d.userId);
              break;
            case 'link':
              if (await identities.link(d.userId, input.platform, d.platformUserId, at)) {
                userOf.set(d.platformUserId, d.userId);
                c.users_linked++;
              } else c.users_skipped++;
              break;
            case 'provision': {
              const id = await dirUsers.insertUser(
                { username: d.username, email: d.email, passwordHash, tenantId: input.tenantId },
                at,
              );
              // A concurrent run (the schedule and an admin at once) linked this platform user first:
              // roll the whole chunk back (this user row too) and let the retry see the link.
              if (!(await identities.link(id, input.platform, d.platformUserId, at)))
                throw ApplicationFailure.retryable(
                  `${input.platform} user ${d.platformUserId} was linked by a concurrent sync`,
                  'OrgSyncConflict',
                );
              userOf.set(d.platformUserId, id);
              c.users_provisioned++;
              break;
            }
            case 'skip':
              c.users_skipped++;
              break;
          }
        }
        if (c.users_provisioned > 0) await recountTenantUsers(tx.sql, [input.tenantId]);
        const teamIdOf = new Map(
          (await teamsRepo.platformTeams(input.tenantId, input.platform)).map((t) => [t.externalId, t.id]),
        );
        const desired = new Map<number, Set<number>>();
        for (const u of users) {
          const userId = userOf.get(u.id);
          if (userId === undefined) continue;
          const want = desired.get(userId) ?? new Set<number>();
          for (const dept of u.departmentIds) {
            const teamId = departments.has(dept) ? teamIdOf.get(dept) : undefined;
            if (teamId !== undefined) want.add(teamId);
          }
          desired.set(userId, want);
        }
        const current = await teamsRepo.memberships(input.tenantId, input.platform, [...desired.keys()]);
        const plan = reconcileMemberships(input.platform, desired, current);
        c.memberships_added = await teamsRepo.addMembers(input.platform, plan.add, at);
        c.memberships_removed = await teamsRepo.removeMembers(input.platform, plan.remove);
        return c;
      });
      return { counts, last: users.length < input.limit ? null : users.at(-1)!.id };
    },

    /**
     * Closes the run. On success: the platform's memberships of users no longer in the snapshot are
     * removed (the users stay), the display-name cache is written; then (always) the staged snapshot
     * is deleted and the run row gets its status, counts and error.
     */
    async orgSyncFinish(
      input: OrgSyncRunRef & { counts: OrgSyncCounts; error: string | null },
    ): Promise<{ memberships_removed: number }> {
      let removed = 0;
      if (input.error === null) {
        const snap = snapshot();
        const platformIds = await snap.userIds(input.runId);
        const present = await orgDirectoryUsersRepository(deps.database).linkedUserIds(
          input.platform,
          platformIds,
        );
        const teams = orgTeamsRepository(deps.database);
        const departed = departedMemberships(
          input.platform,
          await teams.memberships(input.tenantId, input.platform, 'all'),
          present,
        );
        removed = await teams.removeMembers(input.platform, departed);
        const users: Record<string, string> = {};
        for (const u of await snap.users(input.runId, null, 10_000_000)) users[u.id] = u.name;
        const groups: Record<string, string> = {};
        for (const d of await snap.departments(input.runId)) if (d.chatId) groups[d.chatId] = d.name;
        writeDisplayNames(deps.settings.dataDir, input.platform, { users, groups }, deps.now());
      }
      await snapshot().clear(input.runId);
      // A scheduled run refused before its start was recorded still leaves its row.
      await runs().start(
        { runId: input.runId, platform: input.platform, tenantId: input.tenantId },
        deps.now(),
      );
      const counts = { ...input.counts, memberships_removed: input.counts.memberships_removed + removed };
      await runs().finish(
        input.runId,
        {
          status: input.error === null ? 'succeeded' : 'failed',
          counts,
          error: input.error?.slice(0, 1000) ?? null,
        },
        deps.now(),
      );
      return { memberships_removed: removed };
    },
  };
}

export type OrgSyncActivities = ReturnType<typeof createOrgSyncActivities>;
