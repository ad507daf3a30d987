// The only SQL for `api_key_store`: the stored provider keys the remote model proxy uses. Rows hold
// ciphertext only (services encrypt before calling create).
import { and, asc, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';

export type StoredKeyRow = DatabaseHandle['t']['apiKeyStore']['$inferSelect'];

export function apiKeyStoreRepository({ db, t }: DatabaseHandle) {
  const k = t.apiKeyStore;
  return {
    async list(filter: { tenantId?: number } = {}): Promise<StoredKeyRow[]> {
      const where = filter.tenantId !== undefined ? eq(k.tenantId, filter.tenantId) : undefined;
      return db.select().from(k).where(where).orderBy(asc(k.id));
    },
    async find(id: number): Promise<StoredKeyRow | undefined> {
      const [row] = await db.select().from(k).where(eq(k.id, id));
      return row;
    },
    /** An active key of the tenant and provider with this hash (duplicate detection). */
    async findActiveByHash(
      tenantId: number,
      provider: string,
      keyHash: string,
    ): Promise<StoredKeyRow | undefined> {
      const [row] = await db
        .select()
        .from(k)
        .where(
          and(
            eq(k.tenantId, tenantId),
            eq(k.provider, provider),
            eq(k.keyHash, keyHash),
            eq(k.isActive, true),
          ),
        );
      return row;
    },
    async create(values: typeof k.$inferInsert): Promise<StoredKeyRow> {
      const [row] = await db.insert(k).values(values).returning();
      return row!;
    },
    async remove(id: number): Promise<boolean> {
      const rows = await db.delete(k).where(eq(k.id, id)).returning({ id: k.id });
      return rows.length > 0;
    },
  };
}
