// The only SQL for `sso_identities`: which local user an external identity (provider name + the
// provider's stable user id: OIDC `sub`, SAML NameID, a chat platform's user id) belongs to. Unique on
// (provider_name, provider_user_id), so one external identity maps to at most one user. Used by SSO
// login (services/sso/sign-in.ts) and org sync.
import { and, asc, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export interface SsoIdentityRow {
  id: number;
  userId: number;
  providerName: string;
  providerUserId: string;
  createdAt: Date;
}

export function ssoIdentitiesRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const i = t.ssoIdentities;
  const find = async (providerName: string, providerUserId: string) =>
    (
      await db
        .select({ userId: i.userId })
        .from(i)
        .where(and(eq(i.providerName, providerName), eq(i.providerUserId, providerUserId)))
    )[0];
  return {
    async findUserId(providerName: string, providerUserId: string): Promise<number | undefined> {
      return (await find(providerName, providerUserId))?.userId;
    },

    /**
     * Links the identity to the user. Idempotent: linking it again to the same user is a no-op and
     * returns true; an identity already linked to another user is left alone and returns false.
     */
    async link(userId: number, providerName: string, providerUserId: string, at?: Date): Promise<boolean> {
      try {
        await db
          .insert(i)
          .values({ userId, providerName, providerUserId, ...(at ? { createdAt: at } : {}) })
          .onConflictDoNothing();
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      return (await find(providerName, providerUserId))?.userId === userId;
    },

    async listForUser(userId: number): Promise<SsoIdentityRow[]> {
      return db.select().from(i).where(eq(i.userId, userId)).orderBy(asc(i.id));
    },

    /** Removes the user's identities at this provider; the number removed. */
    async unlink(userId: number, providerName: string): Promise<number> {
      const rows = await db
        .delete(i)
        .where(and(eq(i.userId, userId), eq(i.providerName, providerName)))
        .returning({ id: i.id });
      return rows.length;
    },
  };
}
