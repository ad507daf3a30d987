// The only SQL of tenant_autonomous_settings (0034_tenant_autonomous): a tenant's roles that may run
// autonomous workflows and its GitHub token ciphertext. A missing row means the defaults (the
// DEFAULT value of run_roles, no token); writes upsert the row.
import { eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../../client.ts';

export interface TenantAutonomousRow {
  runRoles: string | null;
  githubTokenEncrypted: string | null;
  githubTokenHint: string | null;
}

export type TenantAutonomousPatch = Partial<{
  runRoles: string;
  githubTokenEncrypted: string | null;
  githubTokenHint: string | null;
}>;

export function tenantAutonomousRepository(database: DatabaseHandle) {
  const { db, t } = database;
  const s = t.tenantAutonomousSettings;
  return {
    async find(tenantId: number): Promise<TenantAutonomousRow | undefined> {
      const [row] = await db
        .select({
          runRoles: s.runRoles,
          githubTokenEncrypted: s.githubTokenEncrypted,
          githubTokenHint: s.githubTokenHint,
        })
        .from(s)
        .where(eq(s.tenantId, tenantId));
      return row;
    },

    async put(tenantId: number, patch: TenantAutonomousPatch, by: number, at: Date): Promise<void> {
      await db
        .insert(s)
        .values({ tenantId, ...patch, updatedBy: by, updatedAt: at })
        .onConflictDoUpdate({ target: s.tenantId, set: { ...patch, updatedBy: by, updatedAt: at } });
    },
  };
}
