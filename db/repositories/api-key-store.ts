// The only SQL for `api_key_store`: the stored provider keys the remote model proxy uses. Rows hold
// ciphertext only (services encrypt before calling create).
import { and, asc, eq } from 'drizzle-orm';
import { ConflictError } from '../../domain/errors.ts';
import type { DatabaseHandle } from '../client.ts';
import { invalidateCaches } from '../invalidated-cache.ts';
import { isUniqueViolation } from '../unique-violation.ts';

/**
 * After a committed write of a tenant's stored keys: the model proxy's cached call contexts of that
 * tenant (services/proxy/call-context-cache.ts: they hold the key's ciphertext and base URL) are
 * dropped here and, on PostgreSQL, on every other instance, so a deleted, deactivated or replaced key
 * is not used for the cache's TTL. A failed NOTIFY leaves the write standing; other instances then
 * see it when the TTL ends (the cache's documented bound).
 */
export function keysChanged(database: DatabaseHandle, tenantId: number | null): Promise<void> {
  // A key without a tenant (rows older than tenancy) may serve any tenant: drop every context.
  return invalidateCaches(database, tenantId === null ? 'all' : { tenantId }).catch(() => undefined);
}

/** The answer to a second key of the same name in a tenant (unique index api_key_store_tenant_name). */
export const DUPLICATE_KEY_NAME = 'An API key with this key_name already exists for the tenant';

/** Runs an insert or update of api_key_store, turning the name's unique violation into 409. */
export async function uniqueKeyName<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConflictError(DUPLICATE_KEY_NAME);
    throw error;
  }
}

export type StoredKeyRow = DatabaseHandle['t']['apiKeyStore']['$inferSelect'];

export function apiKeyStoreRepository(database: DatabaseHandle) {
  const { db, t } = database;
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
    /** 409 ConflictError when the tenant already has a key of this name. */
    async create(values: typeof k.$inferInsert): Promise<StoredKeyRow> {
      const [row] = await uniqueKeyName(() => db.insert(k).values(values).returning());
      await keysChanged(database, row!.tenantId);
      return row!;
    },
    async remove(id: number): Promise<boolean> {
      const rows = await db.delete(k).where(eq(k.id, id)).returning({ id: k.id, tenantId: k.tenantId });
      if (rows[0] !== undefined) await keysChanged(database, rows[0].tenantId);
      return rows.length > 0;
    },
  };
}
