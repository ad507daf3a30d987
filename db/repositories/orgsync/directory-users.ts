// The reads org sync needs about local users (db/repositories/users.ts owns the table; these are
// the batch lookups of one chunk) and the one write it makes: provisioning a user with its identity
// link in the caller's transaction. Users are never updated, disabled or deleted here.
import { and, eq, inArray, isNull, like, or, sql } from 'drizzle-orm';
import { isSystemAdmin } from '../../../domain/access.ts';
import type { LocalUserRef } from '../../../domain/orgsync/reconcile.ts';
import type { DatabaseHandle } from '../../client.ts';

type Db = DatabaseHandle['db'];

/** `%`, `_` and `\` taken literally in a LIKE pattern (ESCAPE '\'). */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export function orgDirectoryUsersRepository(database: Pick<DatabaseHandle, 'db' | 't'>) {
  const { t } = database;
  const u = t.users;
  const i = t.ssoIdentities;
  const ref = (r: typeof u.$inferSelect): LocalUserRef => ({
    id: r.id,
    username: r.username,
    email: r.email,
    tenantId: r.tenantId,
    systemAdmin: r.isAdmin || isSystemAdmin(r),
    deleted: r.deletedAt !== null,
  });
  return {
    /** Existing links of this provider for the given platform user ids -> the linked users. */
    async linked(provider: string, platformUserIds: string[], db: Db = database.db) {
      const out = new Map<string, LocalUserRef>();
      if (platformUserIds.length === 0) return out;
      const rows = await db
        .select({ pid: i.providerUserId, user: u })
        .from(i)
        .innerJoin(u, eq(u.id, i.userId))
        .where(and(eq(i.providerName, provider), inArray(i.providerUserId, platformUserIds)));
      for (const r of rows) out.set(r.pid, ref(r.user));
      return out;
    },
    /** Live users whose email (case-insensitive) is one of `emails` (lower-cased). */
    async byEmail(emails: string[], db: Db = database.db) {
      const out = new Map<string, LocalUserRef[]>();
      if (emails.length === 0) return out;
      const rows = await db
        .select()
        .from(u)
        .where(and(isNull(u.deletedAt), inArray(sql`lower(${u.email})`, emails)));
      for (const r of rows) {
        const key = (r.email ?? '').toLowerCase();
        const list = out.get(key) ?? [];
        list.push(ref(r));
        out.set(key, list);
      }
      return out;
    },
    /** Which of `userIds` already carry an identity of this provider. */
    async withIdentity(provider: string, userIds: number[], db: Db = database.db): Promise<Set<number>> {
      if (userIds.length === 0) return new Set();
      const rows = await db
        .select({ userId: i.userId })
        .from(i)
        .where(and(eq(i.providerName, provider), inArray(i.userId, userIds)));
      return new Set(rows.map((r) => r.userId));
    },
    /** Every username equal to a base or of the form `<base>-...` (soft-deleted users included). */
    async usernamesLike(bases: string[], db: Db = database.db): Promise<Set<string>> {
      const out = new Set<string>();
      const unique = [...new Set(bases)];
      for (let k = 0; k < unique.length; k += 100) {
        const part = unique.slice(k, k + 100);
        const rows = await db
          .select({ username: u.username })
          .from(u)
          .where(
            or(
              inArray(u.username, part),
              ...part.map((b) => like(u.username, sql`${`${likeLiteral(b)}-%`} ESCAPE '\\'`)),
            ),
          );
        for (const r of rows) out.add(r.username);
      }
      return out;
    },
    /** Users ids linked to any of the given platform user ids (live users only). */
    async linkedUserIds(
      provider: string,
      platformUserIds: string[],
      db: Db = database.db,
    ): Promise<Set<number>> {
      const out = new Set<number>();
      for (let k = 0; k < platformUserIds.length; k += 500) {
        const part = platformUserIds.slice(k, k + 500);
        const rows = await db
          .select({ userId: i.userId })
          .from(i)
          .where(and(eq(i.providerName, provider), inArray(i.providerUserId, part)));
        for (const r of rows) out.add(r.userId);
      }
      return out;
    },
    async insertUser(
      values: { username: string; email: string | null; passwordHash: string; tenantId: number },
      at: Date,
      db: Db = database.db,
    ): Promise<number> {
      const [row] = await db
        .insert(u)
        .values({ ...values, role: 'user', isAdmin: false, createdAt: at, updatedAt: at })
        .returning({ id: u.id });
      return row!.id;
    },
  };
}
