// Who may use a machine, and as what (`user` or `admin`).
import { and, asc, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function machineAssignmentsRepository({ db, t }: DatabaseHandle) {
  const a = t.machineAssignments;
  return {
    async find(machineId: string, userId: number) {
      const [row] = await db
        .select()
        .from(a)
        .where(and(eq(a.machineId, machineId), eq(a.userId, userId)));
      return row;
    },
    async listForUser(userId: number) {
      return db.select().from(a).where(eq(a.userId, userId));
    },
    /** Grants or changes a user's permission on a machine. */
    async upsert(values: {
      machineId: string;
      userId: number;
      permission: string;
      grantedBy: number | null;
      grantedAt: Date;
    }) {
      const [row] = await db
        .insert(a)
        .values(values)
        .onConflictDoUpdate({
          target: [a.machineId, a.userId],
          set: { permission: values.permission, grantedBy: values.grantedBy, grantedAt: values.grantedAt },
        })
        .returning();
      return row!;
    },
    async delete(machineId: string, userId: number): Promise<boolean> {
      const rows = await db
        .delete(a)
        .where(and(eq(a.machineId, machineId), eq(a.userId, userId)))
        .returning({ id: a.id });
      return rows.length > 0;
    },
    /** Assigned users with the profile fields a listing shows. */
    async listForMachine(machineId: string) {
      return db
        .select({
          userId: a.userId,
          permission: a.permission,
          grantedBy: a.grantedBy,
          grantedAt: a.grantedAt,
          username: t.users.username,
          email: t.users.email,
          role: t.users.role,
        })
        .from(a)
        .leftJoin(t.users, eq(t.users.id, a.userId))
        .where(eq(a.machineId, machineId))
        .orderBy(asc(a.id));
    },
  };
}
