// The only SQL for `sso_sessions`: one row per login session opened through SSO, keyed by the same
// SHA-256 of the session token that `sessions.token` holds (the raw token is only in the client's
// cookie), with the provider's tokens as Fernet ciphertext (the caller encrypts).
import { and, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export function ssoSessionsRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const s = t.ssoSessions;
  return {
    async create(values: {
      sessionTokenHash: string;
      userId: number;
      providerName: string;
      accessTokenCiphertext: string | null;
      refreshTokenCiphertext: string | null;
      expiresAt: Date | null;
    }): Promise<number> {
      const [row] = await db
        .insert(s)
        .values({
          sessionToken: values.sessionTokenHash,
          userId: values.userId,
          providerName: values.providerName,
          accessToken: values.accessTokenCiphertext,
          refreshToken: values.refreshTokenCiphertext,
          expiresAt: values.expiresAt,
        })
        .returning({ id: s.id });
      return row!.id;
    },

    /** Public fields only: the stored provider tokens are never read here. */
    async findBySessionTokenHash(sessionTokenHash: string) {
      const [row] = await db
        .select({ id: s.id, userId: s.userId, providerName: s.providerName, expiresAt: s.expiresAt })
        .from(s)
        .where(eq(s.sessionToken, sessionTokenHash));
      return row;
    },

    async deleteBySessionTokenHash(sessionTokenHash: string): Promise<void> {
      await db.delete(s).where(eq(s.sessionToken, sessionTokenHash));
    },

    /** The session-token hashes of the user's sessions opened through this provider. */
    async listForUserAndProvider(userId: number, providerName: string) {
      return db
        .select({ id: s.id, sessionToken: s.sessionToken })
        .from(s)
        .where(and(eq(s.userId, userId), eq(s.providerName, providerName)));
    },

    async deleteForUserAndProvider(userId: number, providerName: string): Promise<void> {
      await db.delete(s).where(and(eq(s.userId, userId), eq(s.providerName, providerName)));
    },
  };
}
