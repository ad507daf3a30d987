// The only SQL of upload_tokens (personal upload tokens, domain/upload-tokens.ts). Lookups for an
// upload are by the token's hash; listings never select the hash.
import { and, desc, eq, isNull } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export type UploadTokenRow = DatabaseHandle['t']['uploadTokens']['$inferSelect'];
/** A token as listed: everything but its hash. */
export type UploadTokenView = Omit<UploadTokenRow, 'tokenHash'> & { username: string };

export function uploadTokensRepository({ db, t }: DatabaseHandle) {
  const tokens = t.uploadTokens;
  const listed = {
    id: tokens.id,
    userId: tokens.userId,
    tenantId: tokens.tenantId,
    name: tokens.name,
    prefix: tokens.prefix,
    createdAt: tokens.createdAt,
    expiresAt: tokens.expiresAt,
    lastUsedAt: tokens.lastUsedAt,
    revokedAt: tokens.revokedAt,
    revokedBy: tokens.revokedBy,
    username: t.users.username,
  };
  const select = () => db.select(listed).from(tokens).innerJoin(t.users, eq(t.users.id, tokens.userId));
  return {
    async create(values: {
      userId: number;
      tenantId: number | null;
      name: string;
      tokenHash: string;
      prefix: string;
      createdAt: Date;
      expiresAt: Date | null;
    }): Promise<UploadTokenView> {
      const [row] = await db.insert(tokens).values(values).returning({ id: tokens.id });
      return (await this.find(row!.id))!;
    },
    async find(id: number): Promise<UploadTokenView | undefined> {
      const [row] = await select().where(eq(tokens.id, id));
      return row;
    },
    /** Newest first; `tenantId` undefined lists every tenant's (a platform administrator). */
    async list(filter: { userId?: number; tenantId?: number }): Promise<UploadTokenView[]> {
      const where = and(
        filter.userId !== undefined ? eq(tokens.userId, filter.userId) : undefined,
        filter.tenantId !== undefined ? eq(tokens.tenantId, filter.tenantId) : undefined,
      );
      return select().where(where).orderBy(desc(tokens.id));
    },
    /** The token and its owner's current state, by the token's hash. */
    async byHash(tokenHash: string) {
      const [row] = await db
        .select({
          id: tokens.id,
          userId: tokens.userId,
          name: tokens.name,
          expiresAt: tokens.expiresAt,
          revokedAt: tokens.revokedAt,
          lastUsedAt: tokens.lastUsedAt,
          username: t.users.username,
          ownerTenantId: t.users.tenantId,
          ownerActive: t.users.isActive,
          ownerDeletedAt: t.users.deletedAt,
          tenantName: t.tenants.name,
          tenantStatus: t.tenants.status,
          tenantDeletedAt: t.tenants.deletedAt,
        })
        .from(tokens)
        .innerJoin(t.users, eq(t.users.id, tokens.userId))
        .leftJoin(t.tenants, eq(t.tenants.id, t.users.tenantId))
        .where(eq(tokens.tokenHash, tokenHash));
      if (!row) return undefined;
      const { tenantName, tenantStatus, tenantDeletedAt, ...token } = row;
      const tenant =
        tenantName === null || tenantStatus === null
          ? null
          : { name: tenantName, status: tenantStatus, deletedAt: tenantDeletedAt };
      return { ...token, tenant };
    },
    async touch(id: number, at: Date) {
      await db.update(tokens).set({ lastUsedAt: at }).where(eq(tokens.id, id));
    },
    /** Revokes a live token; false when it was already revoked. */
    async revoke(id: number, by: number, at: Date): Promise<boolean> {
      const rows = await db
        .update(tokens)
        .set({ revokedAt: at, revokedBy: by })
        .where(and(eq(tokens.id, id), isNull(tokens.revokedAt)))
        .returning({ id: tokens.id });
      return rows.length > 0;
    },
  };
}
