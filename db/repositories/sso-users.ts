// The user lookups SSO sign-in needs beyond db/repositories/users.ts: the live (not soft-deleted)
// users whose email equals a verified email from an identity provider, compared case-insensitively.
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function ssoUsersRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const u = t.users;
  return {
    /** At most `limit` live users with this email (case-insensitive). */
    async findLiveByEmail(email: string, limit = 2) {
      return db
        .select({ id: u.id, role: u.role, tenantId: u.tenantId, isAdmin: u.isAdmin })
        .from(u)
        .where(and(eq(sql`lower(${u.email})`, email.toLowerCase()), isNull(u.deletedAt)))
        .limit(limit);
    },
  };
}
