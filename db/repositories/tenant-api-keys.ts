// SQL for the tenant-scoped API key endpoints (/api/api-keys) over `api_key_store`. Every read and
// write names the tenant in its WHERE clause, so a key of another tenant is simply not found.
import { and, asc, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';
import { keysChanged, uniqueKeyName } from './api-key-store.ts';

export interface TenantKeyInsert {
  tenantId: number;
  provider: string;
  keyName: string;
  encryptedKey: string;
  keyHash: string;
  baseUrl: string | null;
  isActive: boolean;
  createdBy: number;
  cliTools: string | null;
  cliSettings: string | null;
  /** The writer was a system administrator (see the column in db/schema/remote.ts). */
  createdBySystemAdmin: boolean;
}

export type TenantKeyPatch = Partial<Omit<TenantKeyInsert, 'tenantId' | 'createdBy'>>;

export type TenantKeyRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof tenantApiKeysRepository>['findInTenant']>>
>;

export function tenantApiKeysRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const k = t.apiKeyStore;
  return {
    async listForTenant(tenantId: number) {
      return db.select().from(k).where(eq(k.tenantId, tenantId)).orderBy(asc(k.id));
    },
    async findInTenant(id: number, tenantId: number) {
      const [row] = await db
        .select()
        .from(k)
        .where(and(eq(k.id, id), eq(k.tenantId, tenantId)));
      return row;
    },
    /** Whether a key id exists in any tenant (only to tell `denied` from `not_found` in the audit record). */
    async exists(id: number): Promise<boolean> {
      const rows = await db.select({ id: k.id }).from(k).where(eq(k.id, id));
      return rows.length > 0;
    },
    /** 409 ConflictError when the tenant already has a key of this name. */
    async create(values: TenantKeyInsert, at: Date) {
      const [row] = await uniqueKeyName(() =>
        db
          .insert(k)
          .values({ ...values, createdAt: at, updatedAt: at })
          .returning(),
      );
      await keysChanged(database, values.tenantId);
      return row!;
    },
    /** 409 ConflictError when a rename collides with another key of the tenant. */
    async update(id: number, tenantId: number, patch: TenantKeyPatch, at: Date): Promise<void> {
      await uniqueKeyName(() =>
        db
          .update(k)
          .set({ ...patch, updatedAt: at })
          .where(and(eq(k.id, id), eq(k.tenantId, tenantId))),
      );
      await keysChanged(database, tenantId);
    },
    async delete(id: number, tenantId: number): Promise<void> {
      await db.delete(k).where(and(eq(k.id, id), eq(k.tenantId, tenantId)));
      await keysChanged(database, tenantId);
    },
  };
}
