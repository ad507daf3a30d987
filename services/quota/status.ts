// Read-only quota standings: one subject's use against its limits (checkQuota, and the reason a
// reservation was refused), and every live user's and tenant's inside a read scope (statusOfAll).
// `exceeded` is judged like a reservation: is there room for `ask` (default one more request).
import type { RawSql } from '../../db/client.ts';
import { rawScopeCondition } from '../../db/tenant-scope-sql.ts';
import { exceededDimensions, type QuotaAsk, tenantQuotaLimits } from '../../domain/quota.ts';
import type { ReadScope } from '../../domain/tenant-scope.ts';
import type { AllQuotaStatus, QuotaCore, QuotaStatus, QuotaSubject } from './types.ts';

/** One subject's standing for the day and month of `at`. */
export async function statusOf(
  core: QuotaCore,
  subject: QuotaSubject,
  ask: QuotaAsk,
  at: Date,
  db: RawSql,
): Promise<QuotaStatus> {
  const { repo } = core;
  const p = core.periodsOf(at);
  const [u, t] = await Promise.all([
    repo.readUser(subject.userId, p, db),
    subject.tenantId === null ? undefined : repo.readTenant(subject.tenantId, p, db),
  ]);
  const exceeded = exceededDimensions('user', u.limits, u.daily, u.monthly, ask);
  let tenant: QuotaStatus['tenant'] = null;
  if (t) {
    const limits = tenantQuotaLimits(t.quota);
    exceeded.push(...exceededDimensions('tenant', limits, t.daily, t.monthly, ask));
    tenant = { limits, daily: t.daily, monthly: t.monthly };
  }
  return {
    allowed: exceeded.length === 0,
    exceeded,
    user: { limits: u.limits, daily: u.daily, monthly: u.monthly },
    tenant,
  };
}

/** Every live user's and tenant's standing inside `scope` for the day and month of `at`. */
export async function statusOfAll(core: QuotaCore, scope: ReadScope, at: Date): Promise<AllQuotaStatus> {
  const p = core.periodsOf(at);
  const users = rawScopeCondition(scope, 'u.tenant_id');
  const tenants = rawScopeCondition(scope, 't.id');
  if (users === false || tenants === false) return { day: p.day, month: p.month, users: [], tenants: [] };
  const [u, t] = await Promise.all([core.repo.readAllUsers(p, users), core.repo.readAllTenants(p, tenants)]);
  return {
    day: p.day,
    month: p.month,
    users: u.map((r) => ({ ...r, exceeded: exceededDimensions('user', r.limits, r.daily, r.monthly) })),
    tenants: t.map(({ quota, ...r }) => {
      const limits = tenantQuotaLimits(quota);
      return { ...r, limits, exceeded: exceededDimensions('tenant', limits, r.daily, r.monthly) };
    }),
  };
}
