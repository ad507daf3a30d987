// Organization sync (issue 12 item 4, migration 0022_org_teams): collaboration teams mirrored from the
// departments of a chat platform (`managed_by` = the platform, `external_id` = its department id) or
// created locally (`managed_by` null), their members, the record of every sync run, and the run's
// staged platform snapshot (org_sync_items: pages land here, keyed by run id, so workflow histories
// carry ids and counts only; the rows are deleted when the run ends).
import { index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { bool, createdAt, id, int, str, ts, txt, updatedAt } from './columns.ts';

export const teams = pgTable(
  'teams',
  {
    id: id(),
    tenantId: int('tenant_id').notNull(),
    name: str('name', 200).notNull(),
    description: txt('description'),
    /** `chatplat_a` | `chatplat_b` | null (a local team, never touched by a sync). */
    managedBy: str('managed_by', 20),
    /** The platform's department id (platform-managed teams only). */
    externalId: str('external_id', 100),
    parentExternalId: str('parent_external_id', 100),
    isActive: bool('is_active', true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('teams_tenant_managed_external').on(t.tenantId, t.managedBy, t.externalId)],
);

export const teamMembers = pgTable(
  'team_members',
  {
    id: id(),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: int('user_id').notNull(),
    role: str('role', 20).notNull().default('member'),
    /** The platform whose sync added the membership; null = added locally (a sync never removes it). */
    managedBy: str('managed_by', 20),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('team_members_team_user').on(t.teamId, t.userId),
    index('team_members_user').on(t.userId),
  ],
);

export const orgSyncRuns = pgTable(
  'org_sync_runs',
  {
    id: id(),
    /** The Temporal workflow id of the run. */
    runId: str('run_id', 100).notNull().unique(),
    platform: str('platform', 20).notNull(),
    tenantId: int('tenant_id').notNull(),
    /** running | succeeded | failed */
    status: str('status', 20).notNull(),
    startedAt: ts('started_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
    /** JSON text: the run's counts (departments, users, teams created, memberships added, ...). */
    counts: txt('counts'),
    error: txt('error'),
  },
  (t) => [index('org_sync_runs_platform_tenant').on(t.platform, t.tenantId, t.startedAt)],
);

/** One staged platform object of a running sync: a department or a user (JSON payload). */
export const orgSyncItems = pgTable(
  'org_sync_items',
  {
    id: id(),
    runId: str('run_id', 100).notNull(),
    /** `department` | `user` */
    kind: str('kind', 12).notNull(),
    externalId: str('external_id', 100).notNull(),
    payload: txt('payload').notNull(),
  },
  (t) => [uniqueIndex('org_sync_items_run_kind_external').on(t.runId, t.kind, t.externalId)],
);
