// The only SQL for `role_permissions` (role templates) and `user_permissions` (per-user extras).
import { and, eq } from 'drizzle-orm';
import { invalidateAuthSessions } from '../auth-session-cache.ts';
import type { DatabaseHandle } from '../client.ts';

export function permissionsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  return {
    /** role -> permissions, from the seeded templates. */
    async roleTemplates(): Promise<Map<string, string[]>> {
      const rows = await db
        .select({ role: t.rolePermissions.role, permission: t.rolePermissions.permission })
        .from(t.rolePermissions);
      const out = new Map<string, string[]>();
      for (const r of rows) {
        const list = out.get(r.role) ?? [];
        list.push(r.permission);
        out.set(r.role, list);
      }
      return out;
    },
    async extrasOf(userId: number): Promise<string[]> {
      const rows = await db
        .select({ p: t.userPermissions.permission })
        .from(t.userPermissions)
        .where(eq(t.userPermissions.userId, userId));
      return rows.map((r) => r.p);
    },
    async grant(userId: number, permission: string, grantedBy: number | null, at: Date): Promise<void> {
      await db
        .insert(t.userPermissions)
        .values({ userId, permission, grantedBy, grantedAt: at })
        .onConflictDoNothing();
      await invalidateAuthSessions(database, { userId });
    },
    async revoke(userId: number, permission: string): Promise<void> {
      await db
        .delete(t.userPermissions)
        .where(and(eq(t.userPermissions.userId, userId), eq(t.userPermissions.permission, permission)));
      await invalidateAuthSessions(database, { userId });
    },
  };
}
