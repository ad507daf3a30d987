// The only SQL for `teams` and `team_members` as org sync uses them: a platform's teams of one tenant
// (managed_by = the platform), their creation and renaming, and the memberships of given users in
// them. Local teams (managed_by null) are never selected here, so a sync cannot touch them.
import { and, eq, inArray } from 'drizzle-orm';
import type { Platform } from '../../../domain/orgsync/platform.ts';
import type { LocalPlatformTeam, MembershipRow, TeamPlan } from '../../../domain/orgsync/reconcile.ts';
import type { DatabaseHandle } from '../../client.ts';

type Db = DatabaseHandle['db'];

export function orgTeamsRepository(database: Pick<DatabaseHandle, 'db' | 't'>) {
  const { t } = database;
  const tm = t.teams;
  const mm = t.teamMembers;
  const platformTeams = async (db: Db, tenantId: number, platform: Platform) =>
    db
      .select({ id: tm.id, externalId: tm.externalId, name: tm.name, parentExternalId: tm.parentExternalId })
      .from(tm)
      .where(and(eq(tm.tenantId, tenantId), eq(tm.managedBy, platform)));
  return {
    async platformTeams(
      tenantId: number,
      platform: Platform,
      db: Db = database.db,
    ): Promise<LocalPlatformTeam[]> {
      return (await platformTeams(db, tenantId, platform))
        .filter((r) => r.externalId !== null)
        .map((r) => ({ ...r, externalId: r.externalId as string }));
    },
    /** Applies a team plan; returns the number of teams created (a concurrent creator's row is kept). */
    async applyTeamPlan(
      tenantId: number,
      platform: Platform,
      plan: Pick<TeamPlan, 'create' | 'update'>,
      at: Date,
      db: Db = database.db,
    ): Promise<{ created: number; updated: number }> {
      let created = 0;
      for (const c of plan.create) {
        const rows = await db
          .insert(tm)
          .values({
            tenantId,
            name: c.name,
            managedBy: platform,
            externalId: c.externalId,
            parentExternalId: c.parentExternalId,
            createdAt: at,
            updatedAt: at,
          })
          .onConflictDoNothing()
          .returning({ id: tm.id });
        created += rows.length;
      }
      for (const u of plan.update)
        await db
          .update(tm)
          .set({ name: u.name, parentExternalId: u.parentExternalId, updatedAt: at })
          .where(and(eq(tm.id, u.teamId), eq(tm.managedBy, platform)));
      return { created, updated: plan.update.length };
    },
    /** Memberships of the platform's teams (of the tenant), of the given users or of everyone. */
    async memberships(
      tenantId: number,
      platform: Platform,
      userIds: number[] | 'all',
      db: Db = database.db,
    ): Promise<MembershipRow[]> {
      if (userIds !== 'all' && userIds.length === 0) return [];
      return db
        .select({ teamId: mm.teamId, userId: mm.userId, managedBy: mm.managedBy })
        .from(mm)
        .innerJoin(tm, eq(tm.id, mm.teamId))
        .where(
          and(
            eq(tm.tenantId, tenantId),
            eq(tm.managedBy, platform),
            userIds === 'all' ? undefined : inArray(mm.userId, userIds),
          ),
        );
    },
    async addMembers(
      platform: Platform,
      rows: { teamId: number; userId: number }[],
      at: Date,
      db: Db = database.db,
    ) {
      let added = 0;
      for (const r of rows) {
        const done = await db
          .insert(mm)
          .values({ teamId: r.teamId, userId: r.userId, role: 'member', managedBy: platform, createdAt: at })
          .onConflictDoNothing()
          .returning({ id: mm.id });
        added += done.length;
      }
      return added;
    },
    /** Removes only rows this platform's sync added (managed_by = platform). */
    async removeMembers(
      platform: Platform,
      rows: { teamId: number; userId: number }[],
      db: Db = database.db,
    ) {
      let removed = 0;
      for (const r of rows) {
        const done = await db
          .delete(mm)
          .where(and(eq(mm.teamId, r.teamId), eq(mm.userId, r.userId), eq(mm.managedBy, platform)))
          .returning({ id: mm.id });
        removed += done.length;
      }
      return removed;
    },
  };
}
