// Tenants: /api/tenants* (document 2, "Tenants (admin)"). Creating, listing, changing, suspending and
// deleting tenants and their quotas is for system administrators; a tenant admin may read its own
// tenant (detail, usage, stats, quota check) and change its own tenant's settings. Changes are audited.
// A hard delete removes what the tenant owned and ends its remote sessions; its users stay, without a
// tenant, and cannot log in until an administrator gives them one.

import { type Request, Router } from 'express';
import { z } from 'zod';
import { type TenantRow, tenantsRepository } from '../../db/repositories/tenants.ts';
import { isUniqueViolation } from '../../db/unique-violation.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { inScope, readScope } from '../../domain/tenant-scope.ts';
import {
  DEFAULT_PLAN,
  DEFAULT_TENANT_ID,
  DEFAULT_TENANT_QUOTAS,
  DEFAULT_TENANT_SETTINGS,
  PLAN_DESCRIPTIONS,
  SLUG_PATTERN,
  slugify,
  TENANT_PLANS,
  TENANT_STATUSES,
} from '../../domain/tenants.ts';
import { parseInput } from '../../domain/validation.ts';
import { invalidateTenantAuditSettings } from '../../services/access-caches.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { iso } from '../json-dates.ts';
import { authenticate, requireAdmin, requireSystemAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { count } from '../openapi/shapes.ts';
import { sessionTeardown } from '../remote-session-control.ts';

const slug = z
  .string()
  .trim()
  .toLowerCase()
  .regex(SLUG_PATTERN, 'must be lower-case letters, digits and dashes (1-100)');
const optionalEmail = z
  .union([z.email(), z.literal('')])
  .nullish()
  .transform((v) => (v ? v : null));
const createBody = z.object({
  name: z.string().trim().min(1).max(200),
  slug: slug.optional(),
  plan: z.enum(TENANT_PLANS).default(DEFAULT_PLAN),
  contact_email: optionalEmail,
  contact_name: z.string().trim().max(200).nullish(),
  trial_days: z.number().int().min(1).max(3650).optional(),
});
const updateBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    slug: slug.optional(),
    plan: z.enum(TENANT_PLANS).optional(),
    status: z.enum(TENANT_STATUSES).optional(),
    contact_email: optionalEmail.optional(),
    contact_name: z.string().trim().max(200).nullish(),
  })
  .strict();
const limit = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional();
const quotaBody = z
  .object({
    daily_token_limit: limit,
    monthly_token_limit: limit,
    daily_request_limit: limit,
    monthly_request_limit: limit,
    max_users: z.number().int().min(0).max(1_000_000).optional(),
    max_sessions_per_user: z.number().int().min(0).max(10_000).optional(),
  })
  .strict();
const days = z.number().int().min(1).max(36500).optional();
const settingsBody = z
  .object({
    content_filter_enabled: z.boolean().optional(),
    audit_log_enabled: z.boolean().optional(),
    audit_log_retention_days: days,
    data_retention_days: days,
    sso_enabled: z.boolean().optional(),
  })
  .strict();
const idParam = z.object({ tenant_id: z.coerce.number().int().positive().max(2_147_483_647) });
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD');
const usageQuery = z.object({
  start_date: date.optional(),
  end_date: date.optional(),
  days: z.coerce.number().int().min(1).max(366).optional(),
});
const deleteQuery = z.object({ hard: z.enum(['true', 'false', '1', '0']).optional() });
const listQuery = z.object({ include_deleted: z.enum(['true', 'false', '1', '0']).optional() });

const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const nonEmpty = (o: Record<string, unknown>) => {
  const out = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  if (!Object.keys(out).length) throw new BadRequestError('Nothing to update');
  return out;
};

// user_count is the maintained column (db/repositories/tenants.ts, recountTenantUsers), not a live count.
const tenantView = (t: TenantRow) => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  status: t.status,
  plan: t.plan,
  contact_email: t.contactEmail,
  contact_name: t.contactName,
  trial_ends_at: iso(t.trialEndsAt),
  user_count: t.userCount,
  total_tokens_used: t.totalTokensUsed,
  created_at: iso(t.createdAt),
  updated_at: iso(t.updatedAt),
  deleted_at: iso(t.deletedAt),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const ns = z.string().nullable();
const tenantAnswer = z.looseObject({
  id: count,
  name: z.string(),
  slug: ns,
  status: z.string(),
  plan: z.string(),
  contact_email: ns,
  contact_name: ns,
  trial_ends_at: ns,
  user_count: count,
  total_tokens_used: count,
  created_at: ns,
  updated_at: ns,
  deleted_at: ns,
});
const quotaAnswer = z.looseObject({
  daily_token_limit: count,
  monthly_token_limit: count,
  daily_request_limit: count,
  monthly_request_limit: count,
  max_users: count,
  max_sessions_per_user: count,
});
const settingsAnswer = z.looseObject({
  content_filter_enabled: z.boolean(),
  audit_log_enabled: z.boolean(),
  audit_log_retention_days: count,
  data_retention_days: count,
  sso_enabled: z.boolean(),
});
const tenantDetail = tenantAnswer.extend({ settings: settingsAnswer, quota: quotaAnswer });
const changed = (key: string, value: z.ZodType) => z.looseObject({ success: z.literal(true), [key]: value });
const periodFigures = z.looseObject({
  tokens_used: count,
  requests_made: count,
  token_limit: count,
  request_limit: count,
});
const listTenants = endpoint({
  tags: ['tenants'],
  query: listQuery,
  responses: { 200: z.looseObject({ tenants: z.array(tenantAnswer), total: count }) },
});
const createTenant = endpoint({
  tags: ['tenants'],
  body: createBody,
  responses: { 201: changed('tenant', tenantDetail) },
  errors: [409],
});
const listPlans = endpoint({
  tags: ['tenants'],
  responses: {
    200: z.looseObject({
      plans: z.array(
        z.looseObject({ id: z.string(), name: z.string(), description: z.string(), default: z.boolean() }),
      ),
      default_quotas: quotaAnswer,
    }),
  },
});
const getTenantBySlug = endpoint({
  tags: ['tenants'],
  responses: { 200: z.looseObject({ tenant: tenantDetail }) },
});
const getTenant = endpoint({
  tags: ['tenants'],
  responses: { 200: z.looseObject({ tenant: tenantDetail }) },
});
const updateTenant = endpoint({
  tags: ['tenants'],
  body: updateBody,
  responses: { 200: changed('tenant', tenantDetail) },
});
const setTenantQuota = endpoint({
  tags: ['tenants'],
  body: quotaBody,
  responses: { 200: changed('quota', quotaAnswer) },
});
const setTenantSettings = endpoint({
  tags: ['tenants'],
  body: settingsBody,
  responses: { 200: changed('settings', settingsAnswer) },
});
const suspendTenant = endpoint({ tags: ['tenants'], responses: { 200: changed('tenant', tenantAnswer) } });
const activateTenant = endpoint({ tags: ['tenants'], responses: { 200: changed('tenant', tenantAnswer) } });
const deleteTenant = endpoint({
  tags: ['tenants'],
  query: deleteQuery,
  responses: { 200: z.looseObject({ success: z.literal(true), hard: z.boolean() }) },
});
const checkTenantQuota = endpoint({
  tags: ['tenants'],
  responses: {
    200: z.looseObject({
      tenant_id: count,
      date: z.string(),
      within_quota: z.boolean(),
      exceeded: z.array(z.string()),
      daily: periodFigures,
      monthly: periodFigures,
      users: z.looseObject({ count, max_users: count }),
    }),
  },
});
const getTenantUsage = endpoint({
  tags: ['tenants'],
  query: usageQuery,
  responses: {
    200: z.looseObject({
      tenant_id: count,
      start_date: z.string(),
      end_date: z.string(),
      usage: z.array(z.looseObject({ date: z.string(), tokens_used: count, requests_made: count })),
      totals: z.looseObject({ tokens_used: count, requests_made: count }),
    }),
  },
});
const getTenantStats = endpoint({
  tags: ['tenants'],
  responses: {
    200: z.looseObject({
      tenant_id: count,
      name: z.string(),
      status: z.string(),
      plan: z.string(),
      user_count: count,
      total_tokens_used: count,
      today: periodFigures,
      month: periodFigures,
      within_quota: z.boolean(),
    }),
  },
});

export function tenantsRouter(deps: AppDeps): Router {
  const r = Router();
  r.use(authenticate(deps), requireAdmin);
  const repo = () => tenantsRepository(deps.database);

  /** A tenant the caller may see: system admins any (404 when absent), others only their own (403). */
  const visible = async (req: Request, tenantId: number, includeDeleted = false) => {
    if (!inScope(readScope(req.auth.user), tenantId)) throw new ForbiddenError('Cross-tenant access denied');
    const t = await repo().findById(tenantId, includeDeleted);
    if (!t) throw new NotFoundError('Tenant not found');
    return t;
  };
  const byId = (req: Request, includeDeleted = false) =>
    visible(req, parseInput(idParam, req.params).tenant_id, includeDeleted);

  const detail = async (t: TenantRow) => {
    const [settings, quota] = await Promise.all([repo().settingsOf(t.id), repo().quotaOf(t.id)]);
    return {
      ...tenantView(t),
      settings: settings
        ? {
            content_filter_enabled: settings.contentFilterEnabled,
            audit_log_enabled: settings.auditLogEnabled,
            audit_log_retention_days: settings.auditLogRetentionDays,
            data_retention_days: settings.dataRetentionDays,
            sso_enabled: settings.ssoEnabled,
          }
        : { ...DEFAULT_TENANT_SETTINGS },
      quota: quota
        ? {
            daily_token_limit: quota.dailyTokenLimit,
            monthly_token_limit: quota.monthlyTokenLimit,
            daily_request_limit: quota.dailyRequestLimit,
            monthly_request_limit: quota.monthlyRequestLimit,
            max_users: quota.maxUsers,
            max_sessions_per_user: quota.maxSessionsPerUser,
          }
        : { ...DEFAULT_TENANT_QUOTAS },
    };
  };

  const audit = (
    req: Request,
    action: string,
    tenantId: number,
    details?: Record<string, unknown>,
    severity?: string,
  ) =>
    writeAudit(deps, req, {
      action,
      resourceType: 'tenant',
      resourceId: tenantId,
      targetTenantId: tenantId,
      details,
      severity,
    });

  r.get('/', listTenants, requireSystemAdmin, async (req, res) => {
    const q = listTenants.query(req);
    const includeDeleted = q.include_deleted === 'true' || q.include_deleted === '1';
    const rows = await repo().list(includeDeleted);
    res.json({ tenants: rows.map((t) => tenantView(t)), total: rows.length });
  });

  r.post('/', createTenant, requireSystemAdmin, async (req, res) => {
    const body = createTenant.body(req);
    const s = body.slug ?? slugify(body.name);
    if (!SLUG_PATTERN.test(s))
      throw new BadRequestError('slug: must be lower-case letters, digits and dashes (1-100)');
    if (await repo().slugTaken(s)) throw new BadRequestError('Tenant slug already exists');
    const now = deps.now();
    let created: TenantRow;
    try {
      created = await repo().create(
        {
          name: body.name,
          slug: s,
          plan: body.plan,
          status: body.trial_days ? 'trial' : 'active',
          contactEmail: body.contact_email,
          contactName: body.contact_name ?? null,
          trialEndsAt: body.trial_days ? new Date(now.getTime() + body.trial_days * 86_400_000) : null,
        },
        now,
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw new BadRequestError('Tenant slug already exists');
      throw err;
    }
    await audit(req, 'TENANT_CREATE', created.id, {
      name: created.name,
      slug: created.slug,
      plan: created.plan,
    });
    res.status(201).json({ success: true, tenant: await detail(created) });
  });

  r.get('/plans', listPlans, async (_req, res) => {
    res.json({
      plans: TENANT_PLANS.map((id) => ({
        id,
        name: id,
        description: PLAN_DESCRIPTIONS[id],
        default: id === DEFAULT_PLAN,
      })),
      default_quotas: DEFAULT_TENANT_QUOTAS,
    });
  });

  r.get('/slug/:slug', getTenantBySlug, async (req, res) => {
    const t = await repo().findBySlug(String(req.params.slug).toLowerCase());
    // Out-of-scope and absent look the same to a tenant admin.
    if (!t || !inScope(readScope(req.auth.user), t.id)) {
      if (readScope(req.auth.user).kind !== 'all') throw new ForbiddenError('Cross-tenant access denied');
      throw new NotFoundError('Tenant not found');
    }
    res.json({ tenant: await detail(t) });
  });

  r.get('/:tenant_id', getTenant, async (req, res) => {
    res.json({ tenant: await detail(await byId(req)) });
  });

  r.put('/:tenant_id', updateTenant, requireSystemAdmin, async (req, res) => {
    const t = await byId(req);
    const body = updateTenant.body(req);
    if (body.slug !== undefined && (await repo().slugTaken(body.slug, t.id)))
      throw new BadRequestError('Tenant slug already exists');
    const patch = nonEmpty({
      name: body.name,
      slug: body.slug,
      plan: body.plan,
      status: body.status,
      contactEmail: body.contact_email,
      contactName: body.contact_name,
    });
    try {
      await repo().update(t.id, patch, deps.now());
    } catch (err) {
      if (isUniqueViolation(err)) throw new BadRequestError('Tenant slug already exists');
      throw err;
    }
    await audit(req, 'TENANT_UPDATE', t.id, { changed: Object.keys(patch) });
    res.json({ success: true, tenant: await detail((await repo().findById(t.id))!) });
  });

  r.put('/:tenant_id/quota', setTenantQuota, requireSystemAdmin, async (req, res) => {
    const t = await byId(req);
    const body = setTenantQuota.body(req);
    const patch = nonEmpty({
      dailyTokenLimit: body.daily_token_limit,
      monthlyTokenLimit: body.monthly_token_limit,
      dailyRequestLimit: body.daily_request_limit,
      monthlyRequestLimit: body.monthly_request_limit,
      maxUsers: body.max_users,
      maxSessionsPerUser: body.max_sessions_per_user,
    });
    await repo().putQuota(t.id, patch, deps.now());
    await audit(req, 'TENANT_QUOTA_UPDATE', t.id, body);
    res.json({ success: true, quota: (await detail(t)).quota });
  });

  r.put('/:tenant_id/settings', setTenantSettings, async (req, res) => {
    const t = await byId(req);
    const body = setTenantSettings.body(req);
    const patch = nonEmpty({
      contentFilterEnabled: body.content_filter_enabled,
      auditLogEnabled: body.audit_log_enabled,
      auditLogRetentionDays: body.audit_log_retention_days,
      dataRetentionDays: body.data_retention_days,
      ssoEnabled: body.sso_enabled,
    });
    await repo().putSettings(t.id, patch, deps.now());
    invalidateTenantAuditSettings(deps);
    await audit(req, 'TENANT_SETTINGS_UPDATE', t.id, body);
    res.json({ success: true, settings: (await detail(t)).settings });
  });

  const setStatus =
    (status: 'suspended' | 'active', action: string) =>
    async (req: Request, res: import('express').Response) => {
      const t = await byId(req);
      if (t.status !== status) await repo().update(t.id, { status }, deps.now());
      await audit(
        req,
        action,
        t.id,
        { previous_status: t.status },
        status === 'suspended' ? 'warning' : 'info',
      );
      res.json({ success: true, tenant: tenantView({ ...t, status }) });
    };
  r.post('/:tenant_id/suspend', suspendTenant, requireSystemAdmin, setStatus('suspended', 'TENANT_SUSPEND'));
  r.post('/:tenant_id/activate', activateTenant, requireSystemAdmin, setStatus('active', 'TENANT_ACTIVATE'));

  r.delete('/:tenant_id', deleteTenant, requireSystemAdmin, async (req, res) => {
    const q = deleteTenant.query(req);
    const hard = q.hard === 'true' || q.hard === '1';
    const t = await byId(req, hard);
    if (t.id === DEFAULT_TENANT_ID) throw new BadRequestError('The default tenant cannot be deleted');
    let removed: Record<string, unknown> = {};
    if (hard) {
      // Sessions first, through their workflows, while their machines still exist to hear the stop.
      const stopped = await sessionTeardown(deps, req).stopMatching({ tenantId: t.id }, 'tenant_deleted');
      const summary = await repo().hardDelete(t.id, deps.now());
      removed = {
        sessions_stopped: stopped.length,
        machines: summary.machines,
        machine_assignments: summary.assignments,
        api_keys: summary.apiKeys,
        registration_tokens: summary.registrationTokens,
        users_without_tenant: summary.usersWithoutTenant,
        users_logged_out: summary.usersLoggedOut,
      };
    } else await repo().softDelete(t.id, deps.now());
    await audit(
      req,
      hard ? 'TENANT_HARD_DELETE' : 'TENANT_DELETE',
      t.id,
      { name: t.name, slug: t.slug, hard, ...removed },
      'warning',
    );
    res.json({ success: true, hard, ...(hard ? { removed } : {}) });
  });

  /** Sums of tenant_usage for today and this month (UTC), against the tenant's limits. */
  const quotaStatus = async (t: TenantRow) => {
    const now = deps.now();
    const today = dayOf(now);
    const monthStart = `${today.slice(0, 8)}01`;
    const [rows, d] = await Promise.all([repo().usage(t.id, monthStart, today), detail(t)]);
    const sum = (list: typeof rows) => ({
      tokens_used: list.reduce((a, x) => a + x.tokensUsed, 0),
      requests_made: list.reduce((a, x) => a + x.requestsMade, 0),
    });
    const daily = sum(rows.filter((x) => x.date === today));
    const monthly = sum(rows);
    const q = d.quota;
    const exceeded: string[] = [];
    if (daily.tokens_used >= q.daily_token_limit) exceeded.push('daily_tokens');
    if (monthly.tokens_used >= q.monthly_token_limit) exceeded.push('monthly_tokens');
    if (daily.requests_made >= q.daily_request_limit) exceeded.push('daily_requests');
    if (monthly.requests_made >= q.monthly_request_limit) exceeded.push('monthly_requests');
    const users = t.userCount;
    return {
      tenant_id: t.id,
      date: today,
      within_quota: exceeded.length === 0,
      exceeded,
      daily: { ...daily, token_limit: q.daily_token_limit, request_limit: q.daily_request_limit },
      monthly: { ...monthly, token_limit: q.monthly_token_limit, request_limit: q.monthly_request_limit },
      users: { count: users, max_users: q.max_users },
    };
  };

  r.post('/:tenant_id/check-quota', checkTenantQuota, async (req, res) => {
    res.json(await quotaStatus(await byId(req)));
  });

  r.get('/:tenant_id/usage', getTenantUsage, async (req, res) => {
    const t = await byId(req);
    const q = getTenantUsage.query(req);
    const end = q.end_date ?? dayOf(deps.now());
    const start =
      q.start_date ?? dayOf(new Date(Date.parse(`${end}T00:00:00Z`) - ((q.days ?? 30) - 1) * 86_400_000));
    if (
      Number.isNaN(Date.parse(`${start}T00:00:00Z`)) ||
      Number.isNaN(Date.parse(`${end}T00:00:00Z`)) ||
      start > end
    )
      throw new BadRequestError('start_date must be a date on or before end_date');
    const rows = await repo().usage(t.id, start, end);
    res.json({
      tenant_id: t.id,
      start_date: start,
      end_date: end,
      usage: rows.map((x) => ({
        date: x.date,
        tokens_used: x.tokensUsed,
        requests_made: x.requestsMade,
        active_users: x.activeUsers,
      })),
      totals: {
        tokens_used: rows.reduce((a, x) => a + x.tokensUsed, 0),
        requests_made: rows.reduce((a, x) => a + x.requestsMade, 0),
      },
    });
  });

  r.get('/:tenant_id/stats', getTenantStats, async (req, res) => {
    const t = await byId(req);
    const s = await quotaStatus(t);
    res.json({
      tenant_id: t.id,
      name: t.name,
      status: t.status,
      plan: t.plan,
      user_count: s.users.count,
      max_users: s.users.max_users,
      total_tokens_used: t.totalTokensUsed,
      today: s.daily,
      month: s.monthly,
      within_quota: s.within_quota,
    });
  });

  return r;
}
