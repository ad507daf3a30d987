// The only SQL for `tenants`, `tenant_settings`, `tenant_quotas` and reads of `tenant_usage`, plus the
// tenant hard delete, which removes what the tenant owned in other tables in the same transaction.
//
// tenants.user_count is the number of the tenant's users that are not soft-deleted; deactivated users
// count (they keep their seat: max_users counts them too, and they can be reactivated). It is kept by
// recountTenantUsers, which every user write of db/repositories/users.ts (create, tenant move, soft
// delete; SSO sign-in provisions through it) and org sync's provisioning (activities/orgsync/sync.ts,
// whose repository inserts users itself) run in the write's transaction: one UPDATE ... SET
// user_count = (SELECT COUNT(*) ...) of the affected tenants. A new writer of users.tenant_id or
// users.deleted_at must do the same. The tenants routes read the column; migration 0026 set it once
// for the tenants written before it was kept. A recount is exact and repairs any earlier drift; an increment would not. On
// PostgreSQL the tenant rows are locked first (FOR NO KEY UPDATE, in id order), so the UPDATE's
// snapshot is taken after every concurrent user write of the same tenant committed: the last writer
// counts all. (Not FOR UPDATE: a user insert holds FOR KEY SHARE on its tenant row through the foreign
// key, and two of those waiting for FOR UPDATE would deadlock.)
// tenants.total_tokens_used is added to by the usage paths (services/usage/ingest.ts for uploads and
// usage reports, services/quota.ts's report flush for proxy settles and agent usage reports).
import { and, asc, eq, gte, inArray, isNull, lte, or } from 'drizzle-orm';
import { isSystemAdmin } from '../../domain/access.ts';
import { DEFAULT_TENANT_QUOTAS, DEFAULT_TENANT_SETTINGS } from '../../domain/tenants.ts';
import { invalidateAuthSessions } from '../auth-session-cache.ts';
import type { DatabaseHandle, RawSql } from '../client.ts';
import { invalidateCaches } from '../invalidated-cache.ts';

export interface TenantInsert {
  name: string;
  slug: string;
  plan: string;
  status: string;
  contactEmail: string | null;
  contactName: string | null;
  trialEndsAt: Date | null;
}

export interface TenantPatch {
  name?: string;
  slug?: string;
  plan?: string;
  status?: string;
  contactEmail?: string | null;
  contactName?: string | null;
  trialEndsAt?: Date | null;
}

export interface TenantSettingsPatch {
  contentFilterEnabled?: boolean;
  auditLogEnabled?: boolean;
  auditLogRetentionDays?: number;
  dataRetentionDays?: number;
  ssoEnabled?: boolean;
}

export interface TenantQuotaPatch {
  dailyTokenLimit?: number;
  monthlyTokenLimit?: number;
  dailyRequestLimit?: number;
  monthlyRequestLimit?: number;
  maxUsers?: number;
  maxSessionsPerUser?: number;
}

/** What a hard delete removed or changed (for the audit record). */
export interface HardDeleteSummary {
  machines: number;
  assignments: number;
  apiKeys: number;
  registrationTokens: number;
  usersWithoutTenant: number;
  usersLoggedOut: number;
}

/** Sets tenants.user_count of the given tenants from their users (see the header); call inside the user write's transaction. */
export async function recountTenantUsers(
  sql: RawSql,
  tenantIds: ReadonlyArray<number | null>,
): Promise<void> {
  const ids = [...new Set(tenantIds.filter((id): id is number => id !== null))].sort((a, b) => a - b);
  if (ids.length === 0) return;
  const list = ids.map(() => '?').join(', ');
  if (sql.dialect === 'postgres')
    await sql.query(`SELECT id FROM tenants WHERE id IN (${list}) ORDER BY id FOR NO KEY UPDATE`, ids);
  await sql.query(
    `UPDATE tenants SET user_count = (
       SELECT COUNT(*) FROM users u WHERE u.tenant_id = tenants.id AND u.deleted_at IS NULL)
     WHERE id IN (${list})`,
    ids,
  );
}

export type TenantRow = NonNullable<Awaited<ReturnType<ReturnType<typeof tenantsRepository>['findById']>>>;

export function tenantsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const tn = t.tenants;
  return {
    async list(includeDeleted: boolean) {
      return db
        .select()
        .from(tn)
        .where(includeDeleted ? undefined : isNull(tn.deletedAt))
        .orderBy(asc(tn.id));
    },
    /** A tenant; soft-deleted ones only when asked. */
    async findById(id: number, includeDeleted = false) {
      const [row] = await db
        .select()
        .from(tn)
        .where(includeDeleted ? eq(tn.id, id) : and(eq(tn.id, id), isNull(tn.deletedAt)));
      return row;
    },
    async findBySlug(slug: string) {
      const [row] = await db
        .select()
        .from(tn)
        .where(and(eq(tn.slug, slug), isNull(tn.deletedAt)));
      return row;
    },
    async slugTaken(slug: string, exceptId?: number): Promise<boolean> {
      const rows = await db.select({ id: tn.id }).from(tn).where(eq(tn.slug, slug));
      return rows.some((r) => r.id !== exceptId);
    },
    /** The tenant with its settings and quota rows (spec defaults), in one transaction. */
    async create(values: TenantInsert, at: Date) {
      return database.transaction(async (tx) => {
        const [row] = await tx.db
          .insert(tn)
          .values({ ...values, createdAt: at, updatedAt: at })
          .returning();
        await tx.db.insert(t.tenantSettings).values({
          tenantId: row!.id,
          contentFilterEnabled: DEFAULT_TENANT_SETTINGS.content_filter_enabled,
          auditLogEnabled: DEFAULT_TENANT_SETTINGS.audit_log_enabled,
          auditLogRetentionDays: DEFAULT_TENANT_SETTINGS.audit_log_retention_days,
          dataRetentionDays: DEFAULT_TENANT_SETTINGS.data_retention_days,
          ssoEnabled: DEFAULT_TENANT_SETTINGS.sso_enabled,
          updatedAt: at,
        });
        await tx.db.insert(t.tenantQuotas).values({
          tenantId: row!.id,
          dailyTokenLimit: DEFAULT_TENANT_QUOTAS.daily_token_limit,
          monthlyTokenLimit: DEFAULT_TENANT_QUOTAS.monthly_token_limit,
          dailyRequestLimit: DEFAULT_TENANT_QUOTAS.daily_request_limit,
          monthlyRequestLimit: DEFAULT_TENANT_QUOTAS.monthly_request_limit,
          maxUsers: DEFAULT_TENANT_QUOTAS.max_users,
          maxSessionsPerUser: DEFAULT_TENANT_QUOTAS.max_sessions_per_user,
          updatedAt: at,
        });
        return row!;
      });
    },
    async update(id: number, patch: TenantPatch, at: Date): Promise<void> {
      await db
        .update(tn)
        .set({ ...patch, updatedAt: at })
        .where(eq(tn.id, id));
      // Status (suspension) and name reach cached sessions of the tenant's users.
      await invalidateAuthSessions(database, { tenantId: id });
    },
    async settingsOf(id: number) {
      const [row] = await db.select().from(t.tenantSettings).where(eq(t.tenantSettings.tenantId, id));
      return row;
    },
    async quotaOf(id: number) {
      const [row] = await db.select().from(t.tenantQuotas).where(eq(t.tenantQuotas.tenantId, id));
      return row;
    },
    /** Updates (or creates, for tenants from before this row existed) the settings row. */
    async putSettings(id: number, patch: TenantSettingsPatch, at: Date): Promise<void> {
      await db
        .insert(t.tenantSettings)
        .values({ tenantId: id, ...patch, updatedAt: at })
        .onConflictDoUpdate({ target: t.tenantSettings.tenantId, set: { ...patch, updatedAt: at } });
    },
    async putQuota(id: number, patch: TenantQuotaPatch, at: Date): Promise<void> {
      await db
        .insert(t.tenantQuotas)
        .values({ tenantId: id, ...patch, updatedAt: at })
        .onConflictDoUpdate({ target: t.tenantQuotas.tenantId, set: { ...patch, updatedAt: at } });
      // Every instance returns the tenant's quota leases (services/quota/leases.ts returnFor).
      await invalidateCaches(database, { tenantId: id }).catch(() => undefined);
    },
    async softDelete(id: number, at: Date): Promise<void> {
      await db.update(tn).set({ deletedAt: at, updatedAt: at }).where(eq(tn.id, id));
      await invalidateAuthSessions(database, { tenantId: id });
    },
    /**
     * Removes the tenant and what it owned, in one transaction: its machines with their assignments,
     * its users' machine assignments, stored provider keys, registration tokens and SSO providers; every
     * proxy token issued for it is revoked. Settings, quota and usage rows cascade. Users keep their rows
     * with tenant_id null (spec: set null); the auth sessions of those who are not system administrators
     * end (they may not log in without a tenant). Live remote sessions must have been stopped before
     * (services/remote-session-teardown.ts); this only guarantees their tokens are dead.
     */
    async hardDelete(id: number, at: Date): Promise<HardDeleteSummary> {
      const summary = await database.transaction(async ({ db: tx }) => {
        const members = await tx
          .select({ id: t.users.id, role: t.users.role })
          .from(t.users)
          .where(eq(t.users.tenantId, id));
        const loggedOut = members.filter((u) => !isSystemAdmin(u)).map((u) => u.id);
        const machines = tx
          .select({ id: t.remoteMachines.machineId })
          .from(t.remoteMachines)
          .where(eq(t.remoteMachines.tenantId, id));
        const a = t.machineAssignments;
        const assignments = await tx
          .delete(a)
          .where(
            or(
              inArray(a.machineId, machines),
              members.length
                ? inArray(
                    a.userId,
                    members.map((u) => u.id),
                  )
                : undefined,
            ),
          )
          .returning({ id: a.id });
        const removedMachines = await tx
          .delete(t.remoteMachines)
          .where(eq(t.remoteMachines.tenantId, id))
          .returning({ id: t.remoteMachines.machineId });
        const keys = await tx
          .delete(t.apiKeyStore)
          .where(eq(t.apiKeyStore.tenantId, id))
          .returning({ id: t.apiKeyStore.id });
        const tokens = await tx
          .delete(t.registrationTokens)
          .where(eq(t.registrationTokens.tenantId, id))
          .returning({ id: t.registrationTokens.id });
        await tx.delete(t.ssoProviders).where(eq(t.ssoProviders.tenantId, id));
        await tx
          .update(t.proxyTokens)
          .set({ revokedAt: at, revokedReason: 'stopped' })
          .where(and(eq(t.proxyTokens.tenantId, id), isNull(t.proxyTokens.revokedAt)));
        if (loggedOut.length)
          await tx
            .update(t.sessions)
            .set({ isActive: false })
            .where(and(inArray(t.sessions.userId, loggedOut), eq(t.sessions.isActive, true)));
        await tx.update(t.users).set({ tenantId: null }).where(eq(t.users.tenantId, id));
        await tx.delete(tn).where(eq(tn.id, id));
        return {
          machines: removedMachines.length,
          assignments: assignments.length,
          apiKeys: keys.length,
          registrationTokens: tokens.length,
          usersWithoutTenant: members.length,
          usersLoggedOut: loggedOut.length,
        };
      });
      // Cached sessions were keyed to this tenant id: members' sessions re-read (ended or tenant-less).
      await invalidateAuthSessions(database, { tenantId: id });
      return summary;
    },
    /** tenant_usage rows between two YYYY-MM-DD dates, inclusive. */
    async usage(id: number, from: string, to: string) {
      return db
        .select()
        .from(t.tenantUsage)
        .where(
          and(eq(t.tenantUsage.tenantId, id), gte(t.tenantUsage.date, from), lte(t.tenantUsage.date, to)),
        )
        .orderBy(asc(t.tenantUsage.date));
    },
  };
}
