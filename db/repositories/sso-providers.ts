// The only SQL for `sso_providers`. `config` is JSON text whose secret fields are Fernet ciphertext
// (the caller encrypts before calling `register`); nothing here decrypts.
import { and, asc, eq, isNull, or } from 'drizzle-orm';
import type { DatabaseHandle } from '../client.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export interface SsoProviderRow {
  id: number;
  name: string;
  providerType: string;
  config: string;
  tenantId: number | null;
  isActive: boolean;
  createdAt: Date;
}

export function ssoProvidersRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const p = t.ssoProviders;
  return {
    async findByName(name: string): Promise<SsoProviderRow | undefined> {
      const [row] = await db.select().from(p).where(eq(p.name, name));
      return row;
    },

    /**
     * Active providers; `tenantIds` limits them to platform-wide ones (tenant_id null) plus these
     * tenants' when given (undefined = every provider).
     */
    async listActive(tenantIds?: number[]): Promise<SsoProviderRow[]> {
      const scope =
        tenantIds === undefined
          ? undefined
          : or(isNull(p.tenantId), ...tenantIds.map((id) => eq(p.tenantId, id)));
      return db
        .select()
        .from(p)
        .where(and(eq(p.isActive, true), scope))
        .orderBy(asc(p.name));
    },

    /**
     * A new provider. Returns 'duplicate' when the name is taken, by an active or a disabled provider:
     * names are never reused, because sso_identities rows still point at a disabled provider's name and
     * a new IdP under that name would inherit its users.
     */
    async register(values: {
      name: string;
      providerType: string;
      config: string;
      tenantId: number | null;
      createdAt: Date;
    }): Promise<{ id: number } | 'duplicate'> {
      try {
        const [row] = await db
          .insert(p)
          .values({ ...values, isActive: true })
          .returning({ id: p.id });
        return row!;
      } catch (err) {
        if (isUniqueViolation(err)) return 'duplicate';
        throw err;
      }
    },

    /** New settings for a provider (PUT /api/sso/providers/<name>); the name and type never change. */
    async update(id: number, values: { config: string; tenantId: number | null }): Promise<void> {
      await db.update(p).set(values).where(eq(p.id, id));
    },

    async disable(id: number): Promise<void> {
      await db.update(p).set({ isActive: false }).where(eq(p.id, id));
    },
  };
}
