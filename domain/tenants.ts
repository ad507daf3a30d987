// Tenant rules, pure: statuses, plans, defaults (spec document 2, Tenants and Limits), and when a
// tenant's users are refused.
import { isSystemAdmin } from './access.ts';

export const TENANT_STATUSES = ['active', 'suspended', 'trial', 'inactive'] as const;
export type TenantStatus = (typeof TENANT_STATUSES)[number];
export const TENANT_PLANS = ['free', 'standard', 'premium', 'enterprise'] as const;
export type TenantPlan = (typeof TENANT_PLANS)[number];
export const DEFAULT_PLAN: TenantPlan = 'standard';

/** Spec defaults for a new tenant's `tenant_quotas` row (document 2, Limits). */
export const DEFAULT_TENANT_QUOTAS = {
  daily_token_limit: 1_000_000,
  monthly_token_limit: 30_000_000,
  daily_request_limit: 10_000,
  monthly_request_limit: 300_000,
  max_users: 100,
  max_sessions_per_user: 5,
} as const;

/** Spec defaults for a new tenant's `tenant_settings` row. */
export const DEFAULT_TENANT_SETTINGS = {
  content_filter_enabled: true,
  audit_log_enabled: true,
  audit_log_retention_days: 90,
  data_retention_days: 365,
  sso_enabled: false,
} as const;

/**
 * The plans `GET /api/tenants/plans` lists. The spec names the plans only; a new tenant starts with
 * the spec's default quotas whatever its plan, and an administrator adjusts them per tenant.
 */
export const PLAN_DESCRIPTIONS: Record<TenantPlan, string> = {
  free: 'Free plan',
  standard: 'Standard plan (default)',
  premium: 'Premium plan',
  enterprise: 'Enterprise plan',
};

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$/;

/** A slug derived from a name: lower case, runs of other characters become one dash. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100)
    .replace(/-+$/g, '');
}

/** Why users of this tenant may not log in or use a session, or null when they may. */
export function tenantRefusal(
  tenant: { status: string; deletedAt: Date | null; name: string } | null,
): string | null {
  if (!tenant) return null;
  if (tenant.deletedAt) return `Tenant "${tenant.name}" has been deleted; contact your administrator`;
  if (tenant.status === 'suspended')
    return `Tenant "${tenant.name}" is suspended; contact your administrator`;
  if (tenant.status === 'inactive') return `Tenant "${tenant.name}" is inactive; contact your administrator`;
  return null;
}

/**
 * A user without a tenant (its tenant was hard-deleted, or an administrator removed it) may not log in
 * until an administrator gives it one; system administrators are global and need none.
 */
export const NO_TENANT_REFUSAL = 'Your account has no tenant; ask an administrator to assign one';
export function noTenantRefusal(user: { role: string; tenantId: number | null }): string | null {
  if (user.tenantId != null || isSystemAdmin(user)) return null;
  return NO_TENANT_REFUSAL;
}

/** The tenant the platform ships with (migration baseline); it cannot be deleted. */
export const DEFAULT_TENANT_ID = 1;
