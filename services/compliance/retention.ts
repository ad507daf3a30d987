// Retention cleanup (issue 11 item 4): applies each tenant's rules (tenant_settings
// audit_log_retention_days / data_retention_days) to its audit_logs and usage tables and, for the
// daily schedule, purges expired credentials and old remote command/output rows platform-wide. A dry
// run runs the same per-table WHERE as a COUNT, so its counts equal the real run's (same `now`).
import type { DatabaseHandle } from '../../db/client.ts';
import { type PurgeCutoffs, retentionRepository } from '../../db/repositories/compliance/retention.ts';
import { purgeBefore, retentionCutoffs } from '../../domain/compliance/retention.ts';

export interface TenantCleanup {
  tenant_id: number;
  audit_log_retention_days: number;
  data_retention_days: number;
  audit_before: string;
  data_before: string;
  tables: Record<string, number>;
  total: number;
}

export interface CleanupResult {
  dry_run: boolean;
  run_at: string;
  tenants: TenantCleanup[];
  /** Sum per table over every tenant. */
  tables: Record<string, number>;
  total: number;
  /** Platform-wide purge (the schedule only). */
  purged?: Record<string, number>;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

export function retentionService(deps: { database: DatabaseHandle; now: () => Date }) {
  const repo = retentionRepository(deps.database);
  return {
    /** `tenantIds` undefined: every tenant. */
    async cleanup(opts: { tenantIds?: number[]; dryRun: boolean; purge?: boolean }): Promise<CleanupResult> {
      const now = deps.now();
      const ids = opts.tenantIds ?? (await repo.tenantIds());
      const tenants: TenantCleanup[] = [];
      const totals: Record<string, number> = {};
      for (const tenantId of ids) {
        const rules = await repo.rules(tenantId);
        const cut = retentionCutoffs(now, rules);
        const tables = await repo.sweepTenant(tenantId, cut, !opts.dryRun);
        for (const [t, n] of Object.entries(tables)) totals[t] = (totals[t] ?? 0) + n;
        tenants.push({
          tenant_id: tenantId,
          audit_log_retention_days: rules.auditLogRetentionDays,
          data_retention_days: rules.dataRetentionDays,
          audit_before: cut.auditBefore.toISOString(),
          data_before: cut.dataBefore,
          tables,
          total: sum(tables),
        });
      }
      const result: CleanupResult = {
        dry_run: opts.dryRun,
        run_at: now.toISOString(),
        tenants,
        tables: totals,
        total: sum(totals),
      };
      if (opts.purge) {
        const c: PurgeCutoffs = { now, before: purgeBefore(now) };
        result.purged = await repo.purgeExpired(c, !opts.dryRun);
      }
      return result;
    },
  };
}
