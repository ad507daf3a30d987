import { and, count, eq, isNull } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function usersRepository({ db, t }: DatabaseHandle) {
  return {
    async countActive(): Promise<number> {
      const [row] = await db.select({ n: count() }).from(t.users).where(isNull(t.users.deletedAt));
      return Number(row?.n ?? 0);
    },
    async findByUsername(username: string) {
      const [row] = await db
        .select()
        .from(t.users)
        .where(and(eq(t.users.username, username), isNull(t.users.deletedAt)));
      return row;
    },
    async create(values: typeof t.users.$inferInsert) {
      const [row] = await db.insert(t.users).values(values).returning();
      return row!;
    },
  };
}
