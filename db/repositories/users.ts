// The only SQL for `users`. Every write that changes which tenant a live user counts in (create, a
// tenant move, soft delete) recounts tenants.user_count of the tenants concerned in the same
// transaction (recountTenantUsers, db/repositories/tenants.ts, says what is counted and why a recount).
import { and, asc, count, eq, isNull } from 'drizzle-orm';
import type { ReadScope } from '../../domain/tenant-scope.ts';
import { invalidateAuthSessions } from '../auth-session-cache.ts';
import type { DatabaseHandle } from '../client.ts';
import { invalidateCaches } from '../invalidated-cache.ts';
import { scopeCondition } from '../tenant-scope-sql.ts';
import { recountTenantUsers } from './tenants.ts';

export type UserRow = Awaited<ReturnType<ReturnType<typeof usersRepository>['findById']>> & {};

export interface UserPatch {
  username?: string;
  email?: string | null;
  role?: string;
  isAdmin?: boolean;
  isActive?: boolean;
  systemAccount?: string | null;
  tenantId?: number | null;
  mustChangePassword?: boolean;
}

export interface UserQuota {
  dailyTokenQuota?: number | null;
  monthlyTokenQuota?: number | null;
  dailyRequestQuota?: number | null;
  monthlyRequestQuota?: number | null;
}

export function usersRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const u = t.users;
  /** The user's tenant (soft-deleted users included), read inside a transaction. */
  const tenantOf = async (tx: typeof db, id: number) =>
    (await tx.select({ tenantId: u.tenantId, deletedAt: u.deletedAt }).from(u).where(eq(u.id, id)))[0];
  return {
    async countActive(): Promise<number> {
      const [row] = await db.select({ n: count() }).from(u).where(isNull(u.deletedAt));
      return Number(row?.n ?? 0);
    },
    async findByUsername(username: string) {
      const [row] = await db
        .select()
        .from(u)
        .where(and(eq(u.username, username), isNull(u.deletedAt)));
      return row;
    },
    /** Any row with this username, soft-deleted ones included (the unique constraint covers them). */
    async usernameTaken(username: string, exceptId?: number): Promise<boolean> {
      const rows = await db.select({ id: u.id }).from(u).where(eq(u.username, username));
      return rows.some((r) => r.id !== exceptId);
    },
    /** A user that is not soft-deleted. */
    async findById(id: number) {
      const [row] = await db
        .select()
        .from(u)
        .where(and(eq(u.id, id), isNull(u.deletedAt)));
      return row;
    },
    /** A user including soft-deleted ones (history views). */
    async findAnyById(id: number) {
      const [row] = await db.select().from(u).where(eq(u.id, id));
      return row;
    },
    /** For login: the user (not soft-deleted) and its tenant's state. */
    async findForLogin(username: string) {
      const [row] = await db
        .select({
          user: u,
          tenantStatus: t.tenants.status,
          tenantDeletedAt: t.tenants.deletedAt,
          tenantName: t.tenants.name,
        })
        .from(u)
        .leftJoin(t.tenants, eq(t.tenants.id, u.tenantId))
        .where(and(eq(u.username, username), isNull(u.deletedAt)));
      if (!row) return undefined;
      return {
        user: row.user,
        tenant:
          row.tenantStatus != null
            ? { status: row.tenantStatus, deletedAt: row.tenantDeletedAt, name: row.tenantName ?? '' }
            : null,
      };
    },
    async list(scope: ReadScope) {
      const s = scopeCondition(scope, u.tenantId);
      if (s === false) return [];
      return db
        .select()
        .from(u)
        .where(and(isNull(u.deletedAt), s))
        .orderBy(asc(u.id));
    },
    async countInTenant(tenantId: number): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(u)
        .where(and(eq(u.tenantId, tenantId), isNull(u.deletedAt)));
      return Number(row?.n ?? 0);
    },
    async create(values: typeof t.users.$inferInsert) {
      return database.transaction(async (tx) => {
        const [row] = await tx.db.insert(u).values(values).returning();
        await recountTenantUsers(tx.sql, [row!.tenantId]);
        return row!;
      });
    },
    async update(id: number, patch: UserPatch, at: Date): Promise<void> {
      const write = (tx: typeof db) =>
        tx
          .update(u)
          .set({ ...patch, updatedAt: at })
          .where(and(eq(u.id, id), isNull(u.deletedAt)));
      if (patch.tenantId === undefined) {
        await write(db);
      } else {
        await database.transaction(async (tx) => {
          const before = await tenantOf(tx.db, id);
          await write(tx.db);
          if (before && before.deletedAt === null)
            await recountTenantUsers(tx.sql, [before.tenantId, patch.tenantId!]);
        });
      }
      // Role, activity, tenant, identity: whatever changed, cached sessions of this user re-read.
      await invalidateAuthSessions(database, { userId: id });
    },
    async setPassword(
      id: number,
      passwordHash: string,
      mustChangePassword: boolean,
      at: Date,
    ): Promise<void> {
      await db.update(u).set({ passwordHash, mustChangePassword, updatedAt: at }).where(eq(u.id, id));
      await invalidateAuthSessions(database, { userId: id });
    },
    async setQuota(id: number, quota: UserQuota, at: Date): Promise<void> {
      await db
        .update(u)
        .set({ ...quota, updatedAt: at })
        .where(and(eq(u.id, id), isNull(u.deletedAt)));
      // Every instance returns the user's quota leases (services/quota/leases.ts returnFor), so the
      // next call is judged against the new quota at once; a failed NOTIFY leaves the lease's bound.
      await invalidateCaches(database, { userId: id }).catch(() => undefined);
    },
    async softDelete(id: number, at: Date): Promise<void> {
      await database.transaction(async (tx) => {
        const before = await tenantOf(tx.db, id);
        await tx.db.update(u).set({ deletedAt: at, isActive: false, updatedAt: at }).where(eq(u.id, id));
        await recountTenantUsers(tx.sql, [before?.tenantId ?? null]);
      });
      await invalidateAuthSessions(database, { userId: id });
    },
    async touchLogin(id: number, at: Date): Promise<void> {
      await db.update(u).set({ lastLoginAt: at }).where(eq(u.id, id));
    },
  };
}
